// Issue 35, a full disk, the monitor on the real binary: its data dir on a small tmpfs filled to
// the last byte while the check engine records an HTTP target every 100 ms and heartbeat pings
// come in. Pings and API writes answer 507 "the disk is full", every ping of a group is answered
// (none left hanging), reads and /api/health answer, the engine logs and goes on; once the filler
// is gone pings are taken and checks recorded again, every acknowledged ping is in the store, and
// the database passes integrity_check.
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { healthServer } from '../../helpers/monitor-fixtures.js';
import { serveBinary } from '../../helpers/serve-binary.js';
import { dirOn, smallDisk } from '../../helpers/small-disk.js';
import { waitFor } from '../../helpers/wait.js';
import { send, stopServed } from '../crash/harness.js';

const KEY = 'disk-full-ping-key-0123456789';
const auth = { authorization: 'Bearer mon-token' };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const stop = stopServed;

async function ping(url: string, id: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/ping/${KEY}`, { method: 'POST', body: id });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
}

/** Snapshots the engine recorded for `target` at or after `since` (ms), read beside the running server (WAL). */
function checksSince(file: string, target: string, since: number): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM snapshots WHERE target = ? AND ts >= ?').get(target, since) as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('the monitor on a full disk', () => {
  it('pings and writes answer 507, reads answer, the engine goes on; freed, it records again and loses nothing acknowledged', async () => {
    const health = await healthServer();
    cleanups.push(() => health.close());
    const disk = await smallDisk(16 * 1024 * 1024);
    cleanups.push(() => disk.remove());
    const dataDir = dirOn(disk, 'data');
    writeFileSync(
      join(dataDir, 'monitor.yaml'),
      `name: disk-full\ntoken: mon-token\ntargets:\n  web:\n    url: ${health.url}\n    interval: 100ms\n    timeout: 5s\n  job:\n    interval: 1h\n    heartbeat: { period: 1h, ping_key: ${KEY} }\n`,
    );
    const server = await serveBinary('monitor', dataDir);
    cleanups.push(() => stop(server));
    const file = join(dataDir, 'monitor.db');

    const acknowledged: string[] = [];
    const send1 = async (id: string) => {
      const r = await ping(server.url, id);
      if (r.status === 200) acknowledged.push(id);
      return r;
    };
    for (let i = 0; i < 20; i++) expect((await send1(`before-${i}`)).status).toBe(200);
    await waitFor(async () => checksSince(file, 'web', 0) > 0, 'the engine to record a check of web');

    disk.fill();
    // A group of concurrent pings: every one is answered, 200 (it fit) or 507, none hangs.
    let refused: Awaited<ReturnType<typeof ping>> | undefined;
    for (let round = 0; round < 20 && !refused; round++) {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => send1(`full-${round}-${i}`)));
      for (const a of answers) expect([200, 507]).toContain(a.status);
      refused = answers.find((a) => a.status === 507);
    }
    expect(refused, 'a ping was refused on the full disk').toBeDefined();
    expect(refused!.body.error).toMatch(/^the disk is full: .*free space on the data directory's file system and retry$/);
    const silence = await send(`${server.url}/api/silences`, 'POST', { target: 'web', duration: '1h', reason: 'while the disk is full' }, auth);
    expect(silence.status).toBe(507);
    expect(silence.body.error).toMatch(/^the disk is full/);

    // The check engine meets the full disk too: it logs, and goes on.
    await waitFor(async () => /the disk is full: recording a health check of web/.test(server.stdout()), 'the engine to log a check it could not record');

    // Reads answer, the daemon is up.
    expect((await send(`${server.url}/api/health`, 'GET', undefined)).status).toBe(200);
    const status = await send(`${server.url}/api/status`, 'GET', undefined, auth);
    expect(status.status).toBe(200);
    expect((await send(`${server.url}/api/status/job`, 'GET', undefined, auth)).status).toBe(200);
    expect(server.child.exitCode, server.stdout()).toBeNull();

    // Freed: the next ping is taken, and the engine records checks again.
    disk.free();
    const freedAt = Date.now();
    expect((await send1('after-0')).status).toBe(200);
    await waitFor(async () => checksSince(file, 'web', freedAt) > 0, 'the engine to record a check after the space came back');
    expect((await send(`${server.url}/api/silences`, 'POST', { target: 'web', duration: '1h', reason: 'after' }, auth)).status).toBe(201);

    await stop(server);
    expect(server.child.exitCode).toBe(0);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const logged = new Set((db.prepare("SELECT json_extract(details, '$.log') AS log FROM snapshots WHERE target = 'job' AND details IS NOT NULL").all() as { log: string }[]).map((r) => r.log));
      expect(acknowledged.filter((id) => !logged.has(id))).toEqual([]);
    } finally {
      db.close();
    }
  });
});
