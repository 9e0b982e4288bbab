// createRun: `mkt backup create`. Resolves the data dir and database URL as `mkt serve` does,
// writes the backup (src/backup/create.ts), and prints a summary; the progress line goes to
// stderr only when stderr is a terminal, so logs and pipes stay clean.
import { resolve } from 'node:path';
import type { Factory } from '../../src/cli/factory.js';
import { printJson } from '../../src/cli/output.js';
import { dataDir } from '../../src/config/paths.js';
import { UsageError } from '../../src/cli/errors.js';
import type { BackupService } from '../../src/backup/format.js';
import { ioFailure, size } from './shared.js';

export interface CreateOptions {
  factory: Factory;
  service: BackupService;
  dataDir?: string;
  out: string;
  force?: boolean;
  databaseUrl?: string;
  json?: boolean;
}

export async function createRun(opts: CreateOptions): Promise<void> {
  const { io } = opts.factory;
  const dir = dataDir(opts.dataDir, io.env, io.cwd);
  const { databaseUrlFrom } = await import('../../src/store/open.js');
  let databaseUrl: string | undefined;
  if (opts.service === 'tickets') {
    if (opts.databaseUrl) throw new UsageError('--database-url: the ticket tracker keeps its data in SQLite only');
  } else {
    try {
      databaseUrl = databaseUrlFrom(opts.databaseUrl, io.env);
    } catch (err) {
      throw new UsageError(`--database-url: ${(err as Error).message}`);
    }
  }
  const { createBackup } = await import('../../src/backup/create.js');
  const tty = Boolean(io.stderr.isTTY);
  let last = 0;
  const progress = tty
    ? (p: { members: number; bytes: number }): void => {
        const now = Date.now();
        if (now - last < 200) return;
        last = now;
        io.stderr.write(`\rbacking up ${opts.service}: ${p.members} members, ${size(p.bytes)}\x1b[K`);
      }
    : undefined;
  const out = resolve(io.cwd, opts.out);
  let summary;
  try {
    summary = await createBackup({ service: opts.service, dataDir: dir, out, force: opts.force, databaseUrl, progress });
  } catch (err) {
    throw ioFailure(err, 'the backup failed');
  } finally {
    if (tty) io.stderr.write('\r\x1b[K');
  }
  for (const a of summary.abandoned_removed) io.stderr.write(`removed ${a}: the work of an earlier backup to this file that was killed\n`);
  for (const n of summary.not_included) io.stderr.write(`not included: ${n}\n`);
  for (const s of summary.skipped) io.stderr.write(`skipped (not a file or directory): ${s}\n`);
  if (opts.json) return printJson(io, summary);
  io.stdout.write(
    `wrote ${summary.file}: ${opts.service}, ${summary.files} files (${size(summary.data_bytes)}), ${summary.databases.length} database(s), ${summary.repositories.length} git repositories; ${size(summary.bytes)}, sha256 ${summary.sha256}\n`,
  );
}
