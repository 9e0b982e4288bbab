// A small file system of its own for a server's data directory, so a test can fill it: a tmpfs of
// a given size mounted on a fresh directory (as root: this machine and CI), a filler file written
// into it until the kernel answers ENOSPC, and its removal to free the space again. Mounting needs
// root; without it the suite runs inside a user and mount namespace of its own, where it is root
// (`unshare --user --map-root-user --mount npx vitest run ...`: the server, git and SQLite then see
// the same mount, which wrapping the server alone would not give the test's own git and SQLite).
// Neither: a clear error saying so, never a skip.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './tmp.js';

/** Runs a command (argument array) to its end; rejects with its output on a non-zero exit. */
export function run(cmd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${out}`))));
  });
}

export interface SmallDisk {
  /** The mounted directory: the server's data directory goes here (or is this). */
  path: string;
  /** Writes a filler file until the disk is full; resolves with the bytes written. */
  fill(): number;
  /** Removes the filler: the space is free again. */
  free(): void;
  /** Bytes free now, as the file system reports them. */
  available(): number;
  /** Unmounts (lazily when the directory is still busy) and removes the mount point. */
  remove(): Promise<void>;
}

const UNSHARE_HINT =
  'run the test as root, or inside a user and mount namespace of its own: `unshare --user --map-root-user --mount npx vitest run test/e2e/faults/`';

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** Mounts a tmpfs of `sizeBytes` on a new temporary directory. */
export async function smallDisk(sizeBytes: number): Promise<SmallDisk> {
  if (!isRoot()) {
    throw new Error(`small-disk: mounting a tmpfs needs root; ${UNSHARE_HINT}`);
  }
  const mount = tempDir('mkt-small-disk-');
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', mount.path]);
  } catch (err) {
    mount.remove();
    throw new Error(`small-disk: cannot mount a tmpfs on ${mount.path} (${(err as Error).message.trim()}); ${UNSHARE_HINT}`);
  }
  const filler = join(mount.path, 'filler.bin');
  return {
    path: mount.path,
    fill() {
      // Appends in 64 KiB blocks and then single bytes' worth of smaller blocks until ENOSPC, so
      // that not even a page is left for the server.
      const fd = openSync(filler, 'a');
      let written = 0;
      try {
        for (const size of [1 << 16, 4096, 512, 1]) {
          const block = Buffer.alloc(size, 0x5a);
          for (;;) {
            try {
              written += writeSync(fd, block);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw err;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free() {
      rmSync(filler, { force: true });
    },
    available() {
      const s = statfsSync(mount.path);
      return s.bavail * s.bsize;
    },
    async remove() {
      try {
        await run('umount', [mount.path]);
      } catch {
        await run('umount', ['-l', mount.path]).catch(() => undefined);
      }
      mount.remove();
    },
  };
}

/** A directory inside the small disk (made), for a data dir beside the filler. */
export function dirOn(disk: SmallDisk, name: string): string {
  const dir = join(disk.path, name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
