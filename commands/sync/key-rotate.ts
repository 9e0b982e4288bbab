// keyRotateRun: `mkt sync key rotate` — the whole rotation, resumable: run it again after an
// interruption and it finishes. `key cancel-rotation` drops a rotation idle over 24 hours.
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError } from '../../src/cli/errors.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { ApiError } from '../../src/client/http.js';
import { rotateKey } from '../../src/sync/rotation.js';
import { call, openSession, type ClientFlags } from './shared.js';
import { checkedPassword } from './key-init.js';

export interface KeyRotateOptions extends ClientFlags {
  factory: Factory;
}

export async function keyRotateRun(opts: KeyRotateOptions): Promise<void> {
  const f = opts.factory;
  const s = await openSession(f, opts);
  const password = await checkedPassword(f, s);
  const tty = Boolean(f.io.stderr.isTTY);
  const r = await call(() =>
    rotateKey(s, {
      password,
      onProgress: (p) => {
        if (tty) f.io.stderr.write(`\r${p.phase}: ${p.resealed} entries re-encrypted`);
      },
    }),
  );
  if (tty) f.io.stderr.write('\n');
  if (opts.json) return printJson(f.io, r);
  printFields(f.io, [
    ['rotation', r.rotation_id],
    ['new key id', r.new_key_id],
    ['re-encrypted', r.resealed],
    ['state', r.already_complete ? 'already complete' : r.resumed ? 'resumed and completed' : 'completed'],
  ]);
}

export interface KeyCancelOptions extends ClientFlags {
  factory: Factory;
}

export async function keyCancelRun(opts: KeyCancelOptions): Promise<void> {
  const s = await openSession(opts.factory, opts);
  await call(async () => {
    try {
      await s.client.cancelRotation();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw new NegativeError('no stale rotation (one is cancelled only after 24 hours without activity)');
      throw err;
    }
  });
  s.save((p) => delete p.rotation);
  opts.factory.io.stderr.write('Stale rotation cancelled\n');
}
