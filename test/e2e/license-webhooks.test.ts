// License events through the built binary (issue 33, "Audit trail and webhooks"): a real
// `mkt serve marketplace` sends a floating seat's life (taken, lapsed, another taken) and a
// revocation to a webhook added with `mkt admin webhook add`, signed with the secret that command
// printed, in order; `mkt admin key events` lists the same events; the server stops cleanly on
// SIGTERM while its delivery loop runs. Needs `npm run build`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { serveBinary, type Served } from '../helpers/serve-binary.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { marketplaceEnvFor } from '../helpers/pg.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const mkt = join(import.meta.dirname, '../../bin/mkt');
const dir = tempDir('mkt-license-webhooks-e2e-');
let dbEnv: Record<string, string> = {};
let served: Served;
let receiver: Receiver;
let secret = '';

/** `mkt admin --data-dir DIR ...` through the binary, on the server's database. */
function admin(args: string[], stdin?: string): { stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [mkt, 'admin', '--data-dir', dir.path, ...args], { env: { PATH: process.env.PATH, ...dbEnv }, encoding: 'utf8', input: stdin ?? '' });
  expect(r.status, `mkt admin ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return { stdout: r.stdout, stderr: r.stderr };
}

async function validate(key: string, machine: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${served.url}/api/v1/keys/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key, machine_id: machine, activate: true }) });
  return (await res.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  dbEnv = await marketplaceEnvFor(dir.path);
  served = await serveBinary('marketplace', dir.path, dbEnv);
  receiver = await startReceiver(() => secret);
}, 60_000);
afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  await receiver?.close();
  dir.remove();
});

describe('license webhooks (built binary, real server)', () => {
  it("a seat's life and a revocation reach the webhook in order, signed with the printed secret; key events lists them; SIGTERM stops the server cleanly", async () => {
    secret = admin(['webhook', 'add', receiver.url, '--events', 'license.*']).stdout.trim();
    expect(secret).toMatch(/^whsec_/);
    admin(['item', 'create', 'ci-seats', '--name', 'CI seats', '--max-activations', '1', '--activation', 'floating', '--lease', '1s']);
    const [issued] = JSON.parse(admin(['key', 'issue', 'ci-seats', '--json']).stdout) as { id: string; key: string }[];
    expect(await validate(issued!.key, 'runner-1')).toMatchObject({ valid: true });
    // The one seat is runner-1's until its 1 s lease lapses; then runner-2 takes it.
    await waitFor(async () => (await validate(issued!.key, 'runner-2')).valid === true, "runner-2's seat", 10_000);
    admin(['key', 'revoke', '-'], `${issued!.key}\n`);
    const want = [
      ['license.activated', 'runner-1'],
      ['license.lease_expired', 'runner-1'],
      ['license.activated', 'runner-2'],
      ['license.revoked', null],
    ];
    // Refusals while runner-1 held the seat are aggregated and sent too; the seat's life is what is checked here.
    const life = () => receiver.accepted.filter((d) => d.type !== 'license.verification_refused').map((d) => [d.type, d.data.machine_id]);
    await waitFor(async () => life().length === 4, 'four deliveries', 15_000);
    expect(life()).toEqual(want);
    expect(receiver.log).not.toContain('bad signature');

    const listed = JSON.parse(admin(['key', 'events', issued!.id, '--json']).stdout) as { id: string; type: string; machine_id: string | null }[];
    const seat = listed.filter((e) => e.type !== 'license.verification_refused');
    expect(seat.map((e) => [e.type, e.machine_id])).toEqual(want);
    expect(seat.map((e) => e.id)).toEqual(receiver.accepted.filter((d) => d.type !== 'license.verification_refused').map((d) => d.id));

    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
  });
});
