// The account's devices as `mkt sync devices` names them: an id or a unique prefix of one (as
// tickets take short ids), and renaming this device, which the API spells "register the new
// name, then remove the old registration" (it has no rename).
import { NegativeError } from '../cli/errors.js';
import { ApiError } from '../client/http.js';
import type { SyncDeviceResponse } from './wire.js';
import type { SyncSession } from './session.js';

/** The fewest characters of a device id prefix: as many as a ticket's short id. */
export const MIN_DEVICE_PREFIX = 8;

export type DeviceMatch =
  | { kind: 'one'; device: SyncDeviceResponse }
  | { kind: 'none' }
  | { kind: 'too_short' }
  | { kind: 'ambiguous'; candidates: SyncDeviceResponse[] };

/** The device `idOrPrefix` names: its full id, or a prefix of at least MIN_DEVICE_PREFIX characters that one id starts with. */
export function matchDevice(devices: SyncDeviceResponse[], idOrPrefix: string): DeviceMatch {
  const want = idOrPrefix.trim().toLowerCase();
  const exact = devices.find((d) => d.id.toLowerCase() === want);
  if (exact) return { kind: 'one', device: exact };
  const candidates = devices.filter((d) => d.id.toLowerCase().startsWith(want));
  if (candidates.length === 0) return { kind: 'none' };
  if (candidates.length > 1) return { kind: 'ambiguous', candidates };
  if (want.length < MIN_DEVICE_PREFIX) return { kind: 'too_short' };
  return { kind: 'one', device: candidates[0]! };
}

export type RenameOutcome =
  | { kind: 'unchanged'; device: SyncDeviceResponse }
  | { kind: 'registered'; device: SyncDeviceResponse }
  | { kind: 'renamed'; device: SyncDeviceResponse; previous: { id: string; name: string | undefined } };

/**
 * Gives this device the name `name`. The server keeps one device per name and has no rename:
 * the new name is registered (a new id) and the old registration removed. A name another device
 * holds is refused, or the two devices would become one.
 */
export async function renameThisDevice(s: SyncSession, name: string): Promise<RenameOutcome> {
  const current = s.profile.device_id;
  // A rotation resumes only from the device id that began it.
  if (s.profile.rotation && current) throw new NegativeError('this device has an unfinished key rotation, which only its current registration can resume', 'run `mkt sync key rotate` to finish it, then rename');
  const devices = await s.client.listDevices();
  const holder = devices.find((d) => d.name === name);
  if (holder && holder.id === current) return { kind: 'unchanged', device: holder };
  if (holder) throw new NegativeError(`another device is already named "${name}" (${holder.id})`, `pick another name, or remove that device first with \`mkt sync devices rm ${holder.id.slice(0, MIN_DEVICE_PREFIX)}\``);
  const device = await s.client.registerDevice({ name });
  const previousName = s.profile.device_name;
  s.save((p) => {
    p.device_id = device.id;
    p.device_name = device.name;
  });
  if (!current || current === device.id || !devices.some((d) => d.id === current)) return { kind: 'registered', device };
  try {
    await s.client.deleteDevice(current);
  } catch (err) {
    // Removed meanwhile (by another device's `devices rm`): the rename is done all the same.
    if (!(err instanceof ApiError && err.status === 404)) throw err;
  }
  return { kind: 'renamed', device, previous: { id: current, name: previousName } };
}
