// Crash safety of heartbeat pings (issue 31): pings are written in groups, one transaction per
// target, and answered only after their group committed. The real `mkt serve monitor` takes
// pings from 16 concurrent senders and is SIGKILLed with pings in flight: every ping answered 200
// must be in the store after the kill, each raw row counted once in its hour's and day's rollups,
// and the heartbeat state must be the last acknowledged ping's or a later one. The restarted
// daemon keeps the keys and takes pings again.
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../helpers/tmp.js';
import { serve, writeUntilKilled } from './harness.js';

const TARGETS = 4;
const key = (t: number): string => `crash-ping-key-${t}-0123456789`;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('heartbeat pings and SIGKILL', () => {
  it('every ping answered 200 survives the kill, counted once in the rollups; the restarted daemon takes pings with the same keys', { timeout: 120_000 }, async () => {
    const dir = tempDir('mkt-crash-pings-');
    cleanups.push(() => dir.remove());
    const targets = Array.from({ length: TARGETS }, (_, t) => `  job${t}:\n    interval: 1h\n    heartbeat: { period: 1h, ping_key: ${key(t)} }\n`).join('');
    writeFileSync(join(dir.path, 'monitor.yaml'), `name: crash-pings\ntoken: mon-token\ntargets:\n${targets}`);
    const server = await serve('monitor', dir.path);
    cleanups.push(() => server.child.kill('SIGKILL'));
    const run = await writeUntilKilled(server, {
      workers: 16,
      minAcks: 400,
      minMs: 500,
      async write(w, i) {
        const t = (w + i) % TARGETS;
        const id = `w${w}-${i}`;
        // Every fourth ping is a failure: the incident opens and resolves under the kill too.
        const res = await fetch(`${server.url}/ping/${key(t)}${i % 4 === 3 ? '/3' : ''}`, { method: 'POST', body: id });
        await res.text();
        return res.status === 200 ? { t, id } : undefined;
      },
    });
    expect(run.acknowledged.length).toBeGreaterThanOrEqual(400);

    const db = new Database(join(dir.path, 'monitor.db'), { readonly: true });
    try {
      const logs = new Set((db.prepare("SELECT target, json_extract(details, '$.log') AS log FROM snapshots WHERE details IS NOT NULL").all() as { target: string; log: string }[]).map((r) => `${r.target} ${r.log}`));
      const lost = run.acknowledged.filter((a) => !logs.has(`job${a.t} ${a.id}`));
      expect(lost).toEqual([]);
      for (let t = 0; t < TARGETS; t++) {
        const raw = db.prepare('SELECT count(*) FROM snapshots WHERE target = ?').pluck().get(`job${t}`) as number;
        for (const grain of ['hour', 'day']) {
          const folded = db.prepare(`SELECT coalesce(sum(operational + degraded + down + maintenance), 0) FROM rollup_${grain} WHERE target = ?`).pluck().get(`job${t}`) as number;
          expect(folded, `job${t} ${grain} rollups`).toBe(raw);
        }
        // The state moved with the rows: its last end is no older than the newest recorded signal.
        const lastEnd = db.prepare('SELECT last_end FROM heartbeats WHERE target = ?').pluck().get(`job${t}`) as number;
        const newest = db.prepare("SELECT max(ts) FROM snapshots WHERE target = ? AND details IS NOT NULL").pluck().get(`job${t}`) as number;
        expect(lastEnd).toBe(newest);
      }
    } finally {
      db.close();
    }

    const again = await serve('monitor', dir.path);
    cleanups.push(() => again.child.kill('SIGKILL'));
    const res = await fetch(`${again.url}/ping/${key(0)}`, { method: 'POST', body: 'after the restart' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, target: 'job0', signal: 'success' });
  });
});
