// Spec service B authentication, rule 3-4: the token's resolution order at start-up, the
// generated token (64 characters, saved 0600, printed once), trimming and empty values.
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNode, type TicketNode } from '../../../helpers/tickets-node.js';
import { tempDir } from '../../../helpers/tmp.js';
import { resolveToken } from '../../../../daemon/services/tickets/token.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const d = tempDir();
  cleanups.push(() => d.remove());
  return d.path;
}

async function accepts(n: TicketNode, token: string): Promise<boolean> {
  const r = await fetch(n.url + '/sync/node', { headers: { authorization: `Bearer ${token}` } });
  return r.status === 200;
}

describe('token resolution order', () => {
  it('flag, then environment, then the token file, then a generated one', () => {
    const d = dir();
    const file = join(d, 'token');
    writeFileSync(file, 'from-file\n', { mode: 0o600 });
    expect(resolveToken({ flag: ' from-flag ', env: 'from-env', file })).toEqual({ token: 'from-flag', source: 'flag' });
    expect(resolveToken({ flag: '   ', env: '\tfrom-env\n', file })).toEqual({ token: 'from-env', source: 'env' });
    expect(resolveToken({ flag: '', env: '  ', file })).toEqual({ token: 'from-file', source: 'file' });
    writeFileSync(file, '  \n');
    const gen = resolveToken({ file });
    expect(gen.source).toBe('generated');
    expect(gen.token).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(file, 'utf8').trim()).toBe(gen.token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('a server without any token generates one, saves it 0600 beside the database, prints it once (rule 3), never logs it', async () => {
    const d = dir();
    const first = await startNode(d, {}, { token: null, env: {} });
    const token = readFileSync(join(d, 'token'), 'utf8').trim();
    expect(token).toHaveLength(64);
    expect(statSync(join(d, 'token')).mode & 0o777).toBe(0o600);
    // Printed once, on the line that also says where it is saved; the pino log never has it.
    const lines = first.announced.filter((l) => l.includes(token));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(join(d, 'token'));
    expect(lines[0]!.split(token)).toHaveLength(2);
    expect(first.logs.join('\n')).not.toContain(token);
    expect(await accepts(first, token)).toBe(true);
    await first.stop();

    // The next start reads the file and prints neither the token nor anything about it.
    const second = await startNode(d, {}, { token: null, env: {} });
    cleanups.push(() => second.stop());
    expect(second.announced.join('\n')).not.toContain(token);
    expect(second.announced.filter((l) => l.includes('token'))).toEqual([]);
    expect(second.logs.join('\n')).not.toContain(token);
    expect(await accepts(second, token)).toBe(true);
    expect(await accepts(second, token.slice(0, 63))).toBe(false);
  });

  it('MKT_TICKETS_TOKEN wins over the file; --token wins over both', async () => {
    const d = dir();
    writeFileSync(join(d, 'token'), 'file-token', { mode: 0o600 });
    const byEnv = await startNode(d, {}, { token: null, env: { MKT_TICKETS_TOKEN: '  env-token  ' } });
    expect(await accepts(byEnv, 'env-token')).toBe(true);
    expect(await accepts(byEnv, 'file-token')).toBe(false);
    await byEnv.stop();
    const byFlag = await startNode(d, {}, { token: 'flag-token', env: { MKT_TICKETS_TOKEN: 'env-token' } });
    cleanups.push(() => byFlag.stop());
    expect(await accepts(byFlag, 'flag-token')).toBe(true);
    expect(await accepts(byFlag, 'env-token')).toBe(false);
    expect(readFileSync(join(d, 'token'), 'utf8')).toBe('file-token');
  });
});
