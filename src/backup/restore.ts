// `mkt backup restore`: checks the whole backup first, then extracts it into a staging directory
// beside the target (same file system), checks it again while writing, and only then renames the
// staging directory into place. A restore that fails leaves the target as it was and no
// half-written directory; a non-empty target is refused unless --force, before anything is read.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../cli/errors.js';
import { DATA_PREFIX, type BackupService } from './format.js';
import { checkBackup, type CheckResult } from './verify.js';

export interface RestoreBackupOptions {
  service: BackupService;
  from: string;
  dataDir: string;
  /** Replace a non-empty target (its old content is removed once the new one is in place). */
  force?: boolean;
}

export interface RestoreBackupSummary {
  file: string;
  service: BackupService;
  data_dir: string;
  created_at: string;
  members: number;
  files: number;
  data_bytes: number;
  databases: CheckResult['databases'];
  repositories: string[];
  not_included: string[];
  replaced: boolean;
}

async function targetState(dir: string): Promise<'missing' | 'empty' | 'full'> {
  const st = await stat(dir).catch(() => undefined);
  if (!st) return 'missing';
  if (!st.isDirectory()) throw new UsageError(`${dir} exists and is not a directory`);
  return (await readdir(dir)).length === 0 ? 'empty' : 'full';
}

export async function restoreBackup(opts: RestoreBackupOptions): Promise<RestoreBackupSummary> {
  const from = resolve(opts.from);
  const target = resolve(opts.dataDir);
  const before = await targetState(target);
  if (before === 'full' && !opts.force) throw new UsageError(`${target} is not empty; restore into a new directory, or pass --force to replace its content`);
  if (!(await stat(from).catch(() => undefined))) throw new UsageError(`no backup file at ${from}`);

  // 1. The whole file, before anything is written.
  const checked = await checkBackup(from);
  if (checked.manifest.service !== opts.service) throw new UsageError(`${from} is a backup of the ${checked.manifest.service} service, not ${opts.service}`);

  // 2. Extracted beside the target, and checked again on the way.
  const parent = dirname(target);
  await mkdir(parent, { recursive: true });
  const staging = join(parent, `.${basename(target)}.mkt-restore-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { mode: 0o700 });
  let result: CheckResult;
  try {
    result = await checkBackup(from, { extractTo: staging });
    if (result.manifest.service !== opts.service) throw new UsageError(`${from} changed while it was restored`);
    // Directory modes last, deepest first: a 0500 directory must not stop its files being written.
    const dirs = result.manifest.members.filter((m) => m.type === 'dir').sort((a, b) => b.path.length - a.path.length);
    for (const d of dirs) {
      const rel = d.path === DATA_PREFIX ? '' : d.path.slice(DATA_PREFIX.length + 1);
      await chmod(join(staging, rel), parseInt(d.mode, 8) & 0o777);
    }
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }

  // 3. Into place. The target is checked again: something may have written into it meanwhile.
  const now = await targetState(target);
  try {
    if (now === 'full' && !opts.force) throw new UsageError(`${target} is not empty; restore into a new directory, or pass --force to replace its content`);
    if (now === 'empty') await rmdir(target);
    if (now === 'full') {
      const aside = join(parent, `.${basename(target)}.mkt-replaced-${randomBytes(4).toString('hex')}`);
      await rename(target, aside);
      try {
        await rename(staging, target);
      } catch (err) {
        await rename(aside, target);
        throw err;
      }
      await rm(aside, { recursive: true, force: true });
    } else {
      await rename(staging, target);
    }
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  return {
    file: from,
    service: opts.service,
    data_dir: target,
    created_at: result.manifest.created_at,
    members: result.members,
    files: result.files,
    data_bytes: result.data_bytes,
    databases: result.databases,
    repositories: result.manifest.repositories,
    not_included: result.manifest.not_included,
    replaced: now === 'full',
  };
}
