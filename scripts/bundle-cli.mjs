// Bundles the CLI's start-up path (entry, program, noun registrations, commander) into one
// CommonJS file, dist/cli.cjs. Node's ESM loader and per-file resolution cost more start-up
// time than the whole command tree; verbs stay separate ESM files in dist/, loaded by
// dynamic import() only when run.
import { build } from 'esbuild';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Leaves every dynamic import() external, pointing at the tsc output beside the bundle. */
const lazyImports = {
  name: 'lazy-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      if (!args.path.startsWith('.')) return { path: args.path, external: true };
      const target = resolve(args.resolveDir, args.path);
      const rel = relative(join(root), target).split('\\').join('/');
      return { path: `./${rel}`, external: true };
    });
  },
};

await build({
  entryPoints: [join(root, 'src/cli/main.ts')],
  outfile: join(root, 'dist/cli.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  plugins: [lazyImports],
  logLevel: 'warning',
}).catch(() => process.exit(1));

// jose's verifier as one ESM file over the tsc output of its re-export (see src/client/jose-verify.ts).
await build({
  entryPoints: [join(root, 'src/client/jose-verify.ts')],
  outfile: join(root, 'dist/src/client/jose-verify.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  allowOverwrite: true,
  logLevel: 'warning',
}).catch(() => process.exit(1));
