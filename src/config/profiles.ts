// Saved client profiles: the server URL per service, in $XDG_CONFIG_HOME/mkt/config.json.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from './paths.js';
import type { ServiceName } from './services.js';

export interface Profile {
  server: string;
}
export interface ClientConfig {
  profiles: Partial<Record<ServiceName, Profile>>;
}

export function configFile(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'config.json');
}

export function loadClientConfig(env: NodeJS.ProcessEnv): ClientConfig {
  try {
    const parsed = JSON.parse(readFileSync(configFile(env), 'utf8')) as Partial<ClientConfig>;
    return { profiles: parsed.profiles ?? {} };
  } catch {
    return { profiles: {} };
  }
}

export function saveClientConfig(env: NodeJS.ProcessEnv, cfg: ClientConfig): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = configFile(env);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}
