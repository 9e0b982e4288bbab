// What the `mkt license` verbs share: reading the key without it touching argv or logs,
// the machine flag, the client, the CI exit-code mapping, and the license summary output.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { callApi } from '../../src/cli/api-errors.js';
import { readAll, readSecret } from '../../src/cli/io.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { LicenseClient } from '../../src/client/license.js';
import { machineFingerprint } from '../../src/client/license-offline.js';
import type { KeyStatusLicense } from '../../src/schemas/license.js';

export interface ClientFlags {
  server?: string;
  json?: boolean;
}

export interface KeyFlags {
  keyFile?: string;
}

const NO_KEY = 'no license key: pass --key-file FILE, set MKT_LICENSE_KEY, or pipe it on stdin';

function firstLine(text: string): string {
  return (text.split(/\r?\n/)[0] ?? '').trim();
}

/** The key from --key-file (`-` = stdin), else MKT_LICENSE_KEY, else stdin (a hidden prompt on a terminal). */
export async function readKey(f: Factory, flags: KeyFlags, opts: { optional?: boolean } = {}): Promise<string | undefined> {
  const io = f.io;
  let key: string | undefined;
  if (flags.keyFile !== undefined) {
    if (flags.keyFile === '-') key = firstLine(await readAll(io.stdin));
    else {
      try {
        key = firstLine(readFileSync(resolve(io.cwd, flags.keyFile), 'utf8'));
      } catch (err) {
        throw new UsageError(`cannot read --key-file ${flags.keyFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
  } else if (io.env.MKT_LICENSE_KEY && io.env.MKT_LICENSE_KEY.trim() !== '') key = io.env.MKT_LICENSE_KEY.trim();
  else if (!opts.optional) key = await readSecret(io, 'License key: ');
  if (!key) {
    if (opts.optional) return undefined;
    throw new UsageError(NO_KEY);
  }
  return key;
}

/** `--machine auto` derives this machine's fingerprint; anything else is used as given. */
export function resolveMachine(flag: string): string {
  if (flag.trim() === '') throw new UsageError('--machine must not be empty');
  if (flag !== 'auto') return flag;
  const fp = machineFingerprint();
  if (!fp) throw new UsageError('cannot derive a machine fingerprint here (no machine id found); pass --machine ID');
  return fp;
}

export async function licenseClient(f: Factory, flags: ClientFlags): Promise<LicenseClient> {
  return new LicenseClient(await f.http('marketplace', { server: flags.server }, { anonymous: true }));
}

/** Calls the server; a 429 (abuse limit) is "try later" for CI (exit 3 with a retry hint, src/cli/api-errors.ts), not an invalid key. */
export async function call<T>(fn: () => Promise<T>): Promise<T> {
  return callApi('marketplace', fn, { flags: LICENSE_FIELDS });
}

/** Request fields a refusal names by what the user gave (the key never comes from argv). */
const LICENSE_FIELDS = { key: 'the license key', machine_id: '--machine', machine_fingerprint: '--machine' } as const;

/** Prints the answer (JSON or fields); a negative answer becomes exit 1 with its code on stderr. */
export function finish(f: Factory, json: boolean | undefined, answer: { valid: boolean; code?: string; error?: string | null }, fields: [string, string | number | null | undefined][], raw: unknown): void {
  if (json) printJson(f.io, raw);
  else if (answer.valid) printFields(f.io, fields);
  if (!answer.valid) throw new NegativeError(`${answer.code ?? 'INVALID'}: ${answer.error ?? 'the license key is not valid'}`);
}

export function licenseFields(l: KeyStatusLicense | null | undefined): [string, string | number | null | undefined][] {
  if (!l) return [];
  return [
    ['item', l.item_id],
    ['activations', l.max_activations == null ? `${l.activation_count} (unlimited)` : `${l.activation_count} of ${l.max_activations}`],
    ['remaining', l.remaining_activations == null ? 'unlimited' : l.remaining_activations],
    ['issued', l.created_at],
    ['expires', l.expires_at ?? 'never'],
  ];
}
