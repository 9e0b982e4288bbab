// Work directories of backups whose process died (SIGKILL, a power cut): `create` writes beside
// its output in `.NAME.mkt-backup-XXXXXXXX/` and removes it in a `finally`, which a killed process
// never runs. Each work directory names its owner (host and pid, like git's gc.pid); the next
// backup to the same output removes those whose owner is gone, and leaves a live run's alone.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';

const OWNER_FILE = 'owner';
/** A work directory with no owner file yet is a run between its mkdir and its first write: give it this long. */
const UNOWNED_GRACE_MS = 60 * 60 * 1000;

/** The work directory's name pattern for an output named `base`. */
export const workName = (base: string, suffix: string): string => `.${base}.mkt-backup-${suffix}`;

export async function claimWork(work: string): Promise<void> {
  await writeFile(join(work, OWNER_FILE), `${hostname()} ${process.pid}\n`, { mode: 0o600 });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: a process of another user holds that pid, so it is alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the work directories beside `dir/base` left by runs that died on this host; returns
 * their names. A directory owned by another host (a shared mount) or a live pid stays.
 */
export async function removeAbandoned(dir: string, base: string, now = Date.now()): Promise<string[]> {
  const prefix = workName(base, '');
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(prefix) && /^[0-9a-f]{8}$/.test(n.slice(prefix.length)));
  const removed: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    const owner = await readFile(join(path, OWNER_FILE), 'utf8').catch(() => undefined);
    let dead: boolean;
    if (owner === undefined) {
      const st = await stat(path).catch(() => undefined);
      dead = st !== undefined && now - st.mtimeMs > UNOWNED_GRACE_MS;
    } else {
      const m = /^(\S+) (\d+)\n?$/.exec(owner);
      dead = m !== null && m[1] === hostname() && !alive(Number(m[2]));
    }
    if (!dead) continue;
    await rm(path, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
