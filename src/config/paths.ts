// XDG locations of the client's config and cache, and the server's data directory.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function configDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.trim() !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'mkt');
}

export function cacheDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.trim() !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'mkt');
}

/** Server data directory: flag, then MKT_DATA_DIR, then ./.mkt-data. */
export function dataDir(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  const chosen = flag ?? (env.MKT_DATA_DIR && env.MKT_DATA_DIR.trim() !== '' ? env.MKT_DATA_DIR : '.mkt-data');
  return resolve(cwd, chosen);
}
