// Issue 30 item 9, as a user meets it against a real marketplace: `push` says what the server
// stored and that the pull cursor stays; `pull --json` is one document; `blob get -o -` writes to
// stdout; `devices rm` takes a unique prefix; `devices rename` renames this device (`add` is its
// hidden, deprecated old name).
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

let w: SyncWorld;
let laptop: Device;
let phone: Device;
let tablet: Device;

beforeAll(async () => {
  w = await startSyncWorld();
  laptop = w.device('laptop');
  phone = w.device('phone');
  tablet = w.device('tablet');
  for (const [d, args] of [
    [laptop, ['login', '--device', 'laptop']],
    [laptop, ['key', 'init']],
    [phone, ['login', '--device', 'phone']],
    [tablet, ['login', '--device', 'tablet']],
  ] as const) {
    const full = args[0] === 'login' ? [...args, '--app-key', w.appKey, '--email', w.email] : [...args];
    const r = await d.mkt(full, `${w.password}\n`);
    if (r.code !== 0) throw new Error(`mkt sync ${full.join(' ')}: ${r.err}`);
  }
});
afterAll(async () => w?.close());

const localCursor = async (d: Device): Promise<number> => (JSON.parse((await d.mkt(['status', '--json'])).out) as { local: { cursor: number } }).local.cursor;

describe('mkt sync push and pull --json', () => {
  it('push reports what the server stored and its cursor, and that the pull cursor did not move', async () => {
    const json = await laptop.mkt(['push', '--json'], '{"table":"notes","op":"upsert","row_id":"n1","data":{"t":1}}\n{"table":"notes","op":"upsert","row_id":"n2","data":{"t":2}}\n');
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toEqual({ pushed: 2, accepted: 2, duplicate_batches: 0, cursor: 2, pull_cursor: 0, key_id: 1 });
    const human = await laptop.mkt(['push'], '{"table":"notes","op":"delete","row_id":"n1"}\n');
    expect(human.code, human.err).toBe(0);
    expect(human.out).toMatch(/^pushed\t1 entry \(1 stored\)$/m);
    expect(human.out).toMatch(/^server cursor\t3$/m);
    expect(human.out).toMatch(/^pull cursor\t0 \(unchanged/m);
    // What push printed as the pull cursor is what the device holds.
    expect(await localCursor(laptop)).toBe(0);
    // status names the two cursors as push does.
    const status = (await laptop.mkt(['status'])).out;
    expect(status).toMatch(/^pull cursor\t0$/m);
    expect(status).toMatch(/^server cursor\t3$/m);
  });

  it('pull --json prints one document {entries, count, cursor} and saves the cursor; --since keeps it', async () => {
    const first = await phone.mkt(['pull', '--json']);
    expect(first.code, first.err).toBe(0);
    const doc = JSON.parse(first.out) as { entries: { seq: number; row_id: string; data: unknown }[]; count: number; cursor: number };
    expect(doc.count).toBe(3);
    expect(doc.cursor).toBe(3);
    expect(doc.entries.map((e) => [e.seq, e.row_id, e.data])).toEqual([
      [1, 'n1', { t: 1 }],
      [2, 'n2', { t: 2 }],
      [3, 'n1', null],
    ]);
    expect(await localCursor(phone)).toBe(3);
    expect(JSON.parse((await phone.mkt(['pull', '--json'])).out)).toEqual({ entries: [], count: 0, cursor: 3 });
    const replay = JSON.parse((await phone.mkt(['pull', '--since', '1', '--json'])).out) as typeof doc;
    expect(replay.entries.map((e) => e.seq)).toEqual([2, 3]);
    const zero = JSON.parse((await tablet.mkt(['pull', '--since', '0', '--json'])).out) as typeof doc;
    expect(zero.count).toBe(3);
    expect(await localCursor(tablet)).toBe(0);
    // After a pull, push prints the moved pull cursor.
    const push = await phone.mkt(['push', '--json'], '{"table":"notes","op":"upsert","row_id":"n3"}\n');
    expect(JSON.parse(push.out)).toMatchObject({ cursor: 4, pull_cursor: 3 });
  });
});

describe('mkt sync blob get -o -', () => {
  it('writes the verified blob to stdout, and no file named "-"', async () => {
    const bytes = randomBytes(300_000);
    writeFileSync(join(laptop.home, 'photo.bin'), bytes);
    const put = await laptop.mkt(['blob', 'put', 'photo.bin']);
    expect(put.code, put.err).toBe(0);
    const hash = put.out.trim();
    const io = fakeIO({ env: phone.env, cwd: phone.home });
    const chunks: Buffer[] = [];
    io.stdout.on('data', (c: Buffer) => chunks.push(c));
    const code = await run(['sync', 'blob', 'get', hash, '-o', '-'], io);
    expect(code, io.err()).toBe(0);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    expect(io.err()).toMatch(/Wrote the blob to stdout \(.*SHA-256 verified\)/);
    expect(existsSync(join(phone.home, '-'))).toBe(false);
  });

  it('refuses a terminal and --json (both would share stdout); a missing blob writes nothing', async () => {
    const hash = 'ab'.repeat(32);
    const tty = fakeIO({ env: phone.env, cwd: phone.home, tty: true });
    expect(await run(['sync', 'blob', 'get', hash, '-o', '-'], tty)).toBe(2);
    expect(tty.err()).toMatch(/refusing to write a blob to the terminal/);
    const json = await phone.mkt(['blob', 'get', hash, '-o', '-', '--json']);
    expect(json.code).toBe(2);
    expect(json.err).toMatch(/--json and -o - both write to stdout/);
    const missing = await phone.mkt(['blob', 'get', hash, '-o', '-']);
    expect(missing.code).toBe(1);
    expect(missing.out).toBe('');
    expect((await phone.mkt(['blob', 'put', '-'])).code).toBe(2);
  });
});

describe('mkt sync devices rm and rename', () => {
  it('rm takes a unique prefix of 8 or more characters; ambiguous is exit 2 naming the candidates; none is exit 1', async () => {
    // 17 more devices: with 20 ids over 16 hex digits, some first digit starts two of them.
    const s = await laptop.session();
    for (let i = 0; i < 17; i++) await s.client.registerDevice({ name: `spare-${i}` });
    const list = JSON.parse((await laptop.mkt(['devices', 'ls', '--json'])).out) as { id: string; name: string }[];
    expect(list.length).toBe(20);
    const digit = [...'0123456789abcdef'].find((c) => list.filter((d) => d.id.startsWith(c)).length >= 2)!;
    const ambiguous = await laptop.mkt(['devices', 'rm', digit]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.err).toMatch(/is ambiguous/);
    for (const d of list.filter((x) => x.id.startsWith(digit))) expect(ambiguous.err).toContain(d.id);

    const spare = list.find((d) => d.name.startsWith('spare-') && list.filter((x) => x.id.startsWith(d.id.slice(0, 7))).length === 1)!;
    const short = await laptop.mkt(['devices', 'rm', spare.id.slice(0, 7)]);
    expect(short.code).toBe(2);
    expect(short.err).toMatch(/too short: give the full id or at least 8 characters/);
    const rm = await laptop.mkt(['devices', 'rm', spare.id.slice(0, 8).toUpperCase()]);
    expect(rm.code, rm.err).toBe(0);
    expect(rm.err).toContain(`Removed device ${spare.name} (${spare.id})`);
    const after = JSON.parse((await laptop.mkt(['devices', 'ls', '--json'])).out) as { id: string }[];
    expect(after.map((d) => d.id)).not.toContain(spare.id);
    expect((await laptop.mkt(['devices', 'rm', spare.id.slice(0, 8)])).code).toBe(1);
    expect((await laptop.mkt(['devices', 'rm', 'zzzzzzzz'])).code).toBe(1);
  });

  it('rename renames this device (the old registration goes); a name another device holds is refused', async () => {
    const before = JSON.parse((await tablet.mkt(['status', '--json'])).out) as { local: { device_id: string } };
    const r = await tablet.mkt(['devices', 'rename', 'slate']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^Renamed this device from tablet to slate \(new id .*; the old registration .* is removed\)$/m);
    const list = JSON.parse((await tablet.mkt(['devices', 'ls', '--json'])).out) as { id: string; name: string }[];
    expect(list.map((d) => d.name)).toContain('slate');
    expect(list.map((d) => d.name)).not.toContain('tablet');
    expect(list.map((d) => d.id)).not.toContain(before.local.device_id);
    const local = (JSON.parse((await tablet.mkt(['status', '--json'])).out) as { local: { device_id: string; device_name: string } }).local;
    expect(local).toMatchObject({ device_id: list.find((d) => d.name === 'slate')!.id, device_name: 'slate' });
    // The renamed device can push.
    expect((await tablet.mkt(['push'], '{"table":"t","op":"i","row_id":"x"}\n')).code).toBe(0);

    const same = await tablet.mkt(['devices', 'rename', 'slate']);
    expect(same.code).toBe(0);
    expect(same.err).toMatch(/already named slate/);
    const taken = await tablet.mkt(['devices', 'rename', 'phone']);
    expect(taken.code).toBe(1);
    expect(taken.err).toContain(`another device is already named "phone" (${list.find((d) => d.name === 'phone')!.id})`);
  });

  it('add still renames, with a one-line deprecation warning on stderr', async () => {
    const r = await tablet.mkt(['devices', 'add', 'desk', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(r.err.split('\n')[0]).toBe('mkt: warning: `mkt sync devices add` is deprecated: it renames this device; use `mkt sync devices rename NAME`');
    expect(JSON.parse(r.out)).toMatchObject({ name: 'desk', previous_id: expect.any(String) });
  });
});
