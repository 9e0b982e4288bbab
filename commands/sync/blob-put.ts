// blobPutRun: `mkt sync blob put FILE` — hash, seal and upload (one-shot or multipart, resumable),
// then confirm; prints the hash that names the blob.
import { resolve } from 'node:path';
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { putBlob } from '../../src/sync/blobs.js';
import { formatBytes } from '../../src/sync/pricing.js';
import { call, keepWasmOnBaselineTier, openSession, progressFor, type ClientFlags } from './shared.js';

export interface BlobPutOptions extends ClientFlags {
  factory: Factory;
  file: string;
}

export async function blobPutRun(opts: BlobPutOptions): Promise<void> {
  const f = opts.factory;
  keepWasmOnBaselineTier();
  // A blob is named by the hash of all of it before any byte is sent (and read again to resume): a pipe cannot be read twice.
  if (opts.file === '-') throw new UsageError('blob put needs a file, not stdin: the blob is hashed before it is sent (save the stream to a file first)');
  const s = await openSession(f, opts);
  const bar = await progressFor(f);
  let r;
  try {
    r = await call(() => putBlob(s, resolve(f.io.cwd, opts.file), { onProgress: (p) => bar.update(p) }));
  } finally {
    bar.stop();
  }
  if (opts.json) return printJson(f.io, r);
  if (!f.io.stdout.isTTY) {
    f.io.stdout.write(r.hash + '\n');
    return;
  }
  printFields(f.io, [
    ['hash', r.hash],
    ['size', formatBytes(r.size)],
    ['stored', `${formatBytes(r.size_bytes)} encrypted, ${r.mode}${r.resumed_parts ? ` (resumed after ${r.resumed_parts} parts)` : ''}`],
    ['state', r.already_exists ? 'already stored (skipped)' : 'uploaded and confirmed'],
  ]);
}
