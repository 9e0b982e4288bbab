// devicesLsRun / devicesRenameRun / devicesRmRun: `mkt sync devices ls|rename|rm` — the account's
// registered devices. `rename` gives this device a new name; `rm` takes an id or a unique prefix.
// `add` is the old, misleading name of `rename`: hidden, it warns and renames.
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { printFields, printJson, printTable, type Cell } from '../../src/cli/output.js';
import { ApiError } from '../../src/client/http.js';
import { matchDevice, MIN_DEVICE_PREFIX, renameThisDevice } from '../../src/sync/devices.js';
import { call, openSession, type ClientFlags } from './shared.js';

export interface DevicesOptions extends ClientFlags {
  factory: Factory;
}

export async function devicesLsRun(opts: DevicesOptions): Promise<void> {
  const s = await openSession(opts.factory, opts);
  const list = await call(() => s.client.listDevices());
  if (opts.json) return printJson(opts.factory.io, list);
  printTable(
    opts.factory.io,
    ['id', 'name', 'platform', 'last_seen_at', 'this'],
    list.map((d): Cell[] => [d.id, d.name, d.platform ?? '', d.last_seen_at, d.id === s.profile.device_id ? '*' : '']),
  );
}

export interface DevicesRenameOptions extends DevicesOptions {
  name: string;
}

export async function devicesRenameRun(opts: DevicesRenameOptions): Promise<void> {
  const f = opts.factory;
  if (opts.name.trim() === '') throw new UsageError('the device name must not be empty');
  const s = await openSession(f, opts);
  const r = await call(() => renameThisDevice(s, opts.name));
  if (opts.json) return printJson(f.io, { ...r.device, previous_id: r.kind === 'renamed' ? r.previous.id : null });
  printFields(f.io, [
    ['id', r.device.id],
    ['name', r.device.name],
  ]);
  const what =
    r.kind === 'unchanged'
      ? `This device is already named ${r.device.name}`
      : r.kind === 'registered'
        ? `Registered this device as ${r.device.name}`
        : `Renamed this device from ${r.previous.name ?? r.previous.id} to ${r.device.name} (new id ${r.device.id}; the old registration ${r.previous.id} is removed)`;
  f.io.stderr.write(what + '\n');
}

/** The hidden `devices add`: what it always did was rename this device. */
export async function devicesAddRun(opts: DevicesRenameOptions): Promise<void> {
  opts.factory.io.stderr.write('mkt: warning: `mkt sync devices add` is deprecated: it renames this device; use `mkt sync devices rename NAME`\n');
  await devicesRenameRun(opts);
}

export interface DevicesRmOptions extends DevicesOptions {
  id: string;
}

export async function devicesRmRun(opts: DevicesRmOptions): Promise<void> {
  const s = await openSession(opts.factory, opts);
  const m = matchDevice(await call(() => s.client.listDevices()), opts.id);
  if (m.kind === 'none') throw new NegativeError(`no device ${opts.id}`, 'see `mkt sync devices ls`');
  if (m.kind === 'too_short') throw new UsageError(`device id ${opts.id} is too short: give the full id or at least ${MIN_DEVICE_PREFIX} characters of it`);
  if (m.kind === 'ambiguous') throw new UsageError(`device id ${opts.id} is ambiguous: it starts ${m.candidates.map((d) => `${d.id} (${d.name})`).join(', ')}`);
  const id = m.device.id;
  await call(async () => {
    try {
      await s.client.deleteDevice(id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw new NegativeError(`no device ${id}`);
      throw err;
    }
  });
  if (id === s.profile.device_id) {
    s.save((p) => {
      delete p.device_id;
    });
  }
  opts.factory.io.stderr.write(`Removed device ${m.device.name} (${id})\n`);
}
