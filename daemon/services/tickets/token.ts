// The shared API token, resolved once at start-up in the spec's order: `--token`,
// MKT_TICKETS_TOKEN, the `token` file beside the database, else a new one saved there (0600).
import { randomUUID } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';

export interface ResolvedToken {
  token: string;
  source: 'flag' | 'env' | 'file' | 'generated';
}

function present(v: string | undefined): string | undefined {
  const t = v?.trim();
  return t ? t : undefined;
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export function resolveToken(opts: { flag?: string; env?: string; file: string }): ResolvedToken {
  const flag = present(opts.flag);
  if (flag) return { token: flag, source: 'flag' };
  const env = present(opts.env);
  if (env) return { token: env, source: 'env' };
  const saved = present(readIfExists(opts.file));
  if (saved) return { token: saved, source: 'file' };
  const token = randomUUID().replace(/-/g, '') + randomUUID().replace(/-/g, '');
  writeFileSync(opts.file, token + '\n', { mode: 0o600 });
  chmodSync(opts.file, 0o600); // an existing empty file keeps its old mode through writeFileSync
  return { token, source: 'generated' };
}
