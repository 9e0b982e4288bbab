// statusRun: `mkt sync status` — the server's sync metadata for this user and app, plus what
// this device holds: device, pull cursor, keys, an unfinished rotation or uploads.
import type { Factory } from '../../src/cli/factory.js';
import { printFields, printJson, type Cell } from '../../src/cli/output.js';
import { call, openSession, type ClientFlags } from './shared.js';

export interface StatusOptions extends ClientFlags {
  factory: Factory;
}

export async function statusRun(opts: StatusOptions): Promise<void> {
  const s = await openSession(opts.factory, opts);
  const server = await call(() => s.client.status());
  const ring = await s.keyring().catch(() => undefined);
  const p = s.profile;
  const local = {
    server: s.server,
    email: p.email,
    app_name: p.app_name ?? null,
    device_id: p.device_id ?? null,
    device_name: p.device_name ?? null,
    cursor: p.cursor,
    keys_held: ring?.keys.length ?? 0,
    rotation_in_progress: p.rotation?.rotation_id ?? null,
    unfinished_uploads: s.state.uploads(s.server).map((u) => u.hash),
  };
  if (opts.json) return printJson(opts.factory.io, { server, local });
  const fields: [string, Cell][] = [
    ['server', s.server],
    ['email', p.email],
    ['app', p.app_name ?? ''],
    ['device', p.device_id ? `${p.device_name} (${p.device_id})` : 'not registered'],
    // "pull cursor", as `push` says it: the server's own cursor follows as "server cursor".
    ['pull cursor', p.cursor],
    ['keys held', ring ? ring.keys.length : 'none (run `mkt sync key unlock`)'],
  ];
  if (p.rotation) fields.push(['rotation', `${p.rotation.rotation_id} unfinished: run \`mkt sync key rotate\` to resume`]);
  if (local.unfinished_uploads.length) fields.push(['uploads', `${local.unfinished_uploads.length} unfinished (run \`mkt sync blob put\` again to resume)`]);
  for (const [k, v] of Object.entries(server)) fields.push([`server ${k}`, typeof v === 'object' && v !== null ? JSON.stringify(v) : (v as Cell)]);
  printFields(opts.factory.io, fields);
}
