// Backup of a ticket tracker while it takes writes, on the real binary: tickets are created in a
// loop, `mkt backup create tickets` runs in the middle, and every ticket acknowledged before the
// backup started is on the server restored from it (`mkt backup restore`, then `mkt serve`);
// the file verifies, the restored database passes integrity_check, the token file keeps 0600.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { integrity, mkt, stopServed, writeLoop } from './rig.js';

const tmp = tempDir('mkt-backup-tickets-');
const servers: Served[] = [];
afterAll(async () => {
  for (const s of servers) await stopServed(s);
  tmp.remove();
});

async function create(url: string, token: string, title: string): Promise<string> {
  const res = await fetch(`${url}/tickets`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ title }) });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

describe('mkt backup: tickets, online', () => {
  it('every ticket acknowledged before the backup started is on the restored server', async () => {
    const data = join(tmp.path, 'data');
    // No token given: the server generates one into <data>/token (0600), which the backup must keep.
    const live = await serveBinary('tickets', data);
    servers.push(live);
    const tokenFile = join(data, 'token');
    const token = await waitFor(async () => readFileSync(tokenFile, 'utf8').trim(), 'the generated token');
    const loop = writeLoop((i) => create(live.url, token, `ticket ${i}`));
    await waitFor(async () => loop.acked().length >= 30, 'thirty acknowledged tickets');
    const before = loop.acked();
    const file = join(tmp.path, 'tickets.tar');
    const made = await mkt(['backup', 'create', 'tickets', '--data-dir', data, '--out', file, '--json']);
    await loop.stop();
    expect(made.code, made.err).toBe(0);
    expect(made.err).toBe(''); // no progress line: stderr is a pipe
    expect(JSON.parse(made.out)).toMatchObject({ service: 'tickets', databases: ['tickets.db'], not_included: [] });

    const verified = await mkt(['backup', 'verify', file]);
    expect(verified.code, verified.err).toBe(0);

    const target = join(tmp.path, 'restored');
    const restored = await mkt(['backup', 'restore', 'tickets', '--from', file, '--data-dir', target]);
    expect(restored.code, restored.err).toBe(0);
    expect(statSync(join(target, 'token')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(target, 'token'), 'utf8').trim()).toBe(token);

    const back = await serveBinary('tickets', target);
    servers.push(back);
    for (const id of before) {
      const res = await fetch(`${back.url}/tickets/${id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, `ticket ${id}`).toBe(200);
    }
    // The restored node takes writes too.
    await create(back.url, token, 'after the restore');
    await stopServed(back);
    expect(integrity(join(target, 'tickets.db'))).toBe('ok');
  });
});
