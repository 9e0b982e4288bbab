// devicesLsRun / devicesAddRun / devicesRmRun: `mkt sync devices ls|add|rm` — the account's
// registered devices. `add` registers this device (same name updates it).
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { printFields, printJson, printTable, type Cell } from '../../src/cli/output.js';
import { ApiError } from '../../src/client/http.js';
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

export interface DevicesAddOptions extends DevicesOptions {
  name: string;
}

export async function devicesAddRun(opts: DevicesAddOptions): Promise<void> {
  if (opts.name.trim() === '') throw new UsageError('the device name must not be empty');
  const s = await openSession(opts.factory, opts);
  const d = await call(() => s.client.registerDevice({ name: opts.name }));
  s.save((p) => {
    p.device_id = d.id;
    p.device_name = d.name;
  });
  if (opts.json) return printJson(opts.factory.io, d);
  printFields(opts.factory.io, [
    ['id', d.id],
    ['name', d.name],
  ]);
}

export interface DevicesRmOptions extends DevicesOptions {
  id: string;
}

export async function devicesRmRun(opts: DevicesRmOptions): Promise<void> {
  const s = await openSession(opts.factory, opts);
  await call(async () => {
    try {
      await s.client.deleteDevice(opts.id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw new NegativeError(`no device ${opts.id}`);
      throw err;
    }
  });
  if (opts.id === s.profile.device_id) {
    s.save((p) => {
      delete p.device_id;
    });
  }
  opts.factory.io.stderr.write(`Removed device ${opts.id}\n`);
}
