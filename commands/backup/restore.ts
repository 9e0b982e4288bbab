// restoreRun: `mkt backup restore <service> --from FILE --data-dir NEW`. Everything is in
// src/backup/restore.ts (refusals before any read, verify, staging dir, rename); this prints.
import { resolve } from 'node:path';
import type { Factory } from '../../src/cli/factory.js';
import { printJson } from '../../src/cli/output.js';
import type { BackupService } from '../../src/backup/format.js';
import { ioFailure, size } from './shared.js';

export interface RestoreOptions {
  factory: Factory;
  service: BackupService;
  from: string;
  dataDir: string;
  force?: boolean;
  json?: boolean;
}

export async function restoreRun(opts: RestoreOptions): Promise<void> {
  const { io } = opts.factory;
  const { restoreBackup } = await import('../../src/backup/restore.js');
  let r;
  try {
    r = await restoreBackup({ service: opts.service, from: resolve(io.cwd, opts.from), dataDir: resolve(io.cwd, opts.dataDir), force: opts.force });
  } catch (err) {
    throw ioFailure(err, 'the restore failed');
  }
  for (const n of r.not_included) io.stderr.write(`not included in this backup: ${n}\n`);
  if (opts.json) return printJson(io, r);
  io.stdout.write(`restored ${r.service} into ${r.data_dir}: ${r.files} files (${size(r.data_bytes)}) as of ${r.created_at}; start it with: mkt serve ${r.service} --data-dir ${r.data_dir}\n`);
}
