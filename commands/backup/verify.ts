// verifyRun: `mkt backup verify FILE`. Reads the whole file once (src/backup/verify.ts): every
// member against the manifest, every database through integrity_check. Damage is exit 1.
import { resolve } from 'node:path';
import type { Factory } from '../../src/cli/factory.js';
import { printJson } from '../../src/cli/output.js';
import { ioFailure, size } from './shared.js';

export interface VerifyOptions {
  factory: Factory;
  file: string;
  json?: boolean;
}

export async function verifyRun(opts: VerifyOptions): Promise<void> {
  const { io } = opts.factory;
  const { checkBackup } = await import('../../src/backup/verify.js');
  const file = resolve(io.cwd, opts.file);
  let r;
  try {
    r = await checkBackup(file);
  } catch (err) {
    throw ioFailure(err, `reading ${file} failed`);
  }
  const m = r.manifest;
  const summary = { file, ok: true, service: m.service, created_at: m.created_at, mkt_version: m.mkt_version, members: r.members, files: r.files, data_bytes: r.data_bytes, databases: r.databases, repositories: m.repositories, not_included: m.not_included };
  if (opts.json) return printJson(io, summary);
  io.stdout.write(`${file}: ok: ${m.service} backup of ${m.created_at}, ${r.files} files (${size(r.data_bytes)}), ${r.databases.length} database(s) pass integrity_check, ${m.repositories.length} git repositories\n`);
  for (const n of m.not_included) io.stdout.write(`not included: ${n}\n`);
}
