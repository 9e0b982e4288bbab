// blobGetRun: `mkt sync blob get HASH -o FILE` — download, open every chunk, re-hash; the file
// appears only when all of it opened and its SHA-256 is HASH. `-o -` writes to stdout instead:
// every byte written has passed its chunk's authentication, and a blob cut short exits 1.
import { resolve } from 'node:path';
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { printJson } from '../../src/cli/output.js';
import { getBlob } from '../../src/sync/blobs.js';
import { formatBytes } from '../../src/sync/pricing.js';
import { call, keepWasmOnBaselineTier, openSession, progressFor, type ClientFlags } from './shared.js';

export interface BlobGetOptions extends ClientFlags {
  factory: Factory;
  hash: string;
  output?: string;
}

export async function blobGetRun(opts: BlobGetOptions): Promise<void> {
  const f = opts.factory;
  keepWasmOnBaselineTier();
  if (!opts.output) throw new UsageError('pass -o FILE (where to write the decrypted blob; `-o -` for stdout)');
  const toStdout = opts.output === '-';
  if (toStdout && opts.json) throw new UsageError('--json and -o - both write to stdout: pass -o FILE with --json');
  if (toStdout && f.io.stdout.isTTY) throw new UsageError('refusing to write a blob to the terminal: pipe it (`-o - | ...`) or pass -o FILE');
  const hash = opts.hash.toLowerCase();
  const s = await openSession(f, opts);
  const bar = await progressFor(f);
  let r;
  try {
    r = await call(() => getBlob(s, hash, toStdout ? f.io.stdout : resolve(f.io.cwd, opts.output!), { onProgress: (p) => bar.update(p) }));
  } finally {
    bar.stop();
  }
  if (opts.json) return printJson(f.io, r);
  f.io.stderr.write(`Wrote ${toStdout ? 'the blob to stdout' : opts.output} (${formatBytes(r.size)}, SHA-256 verified)\n`);
}
