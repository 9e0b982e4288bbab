// Bundles the CLI's start-up path (entry, program, noun registrations, commander) into one
// CommonJS file, dist/cli.cjs. Node's ESM loader and per-file resolution cost more start-up
// time than the whole command tree; verbs stay separate ESM files in dist/, loaded by
// dynamic import() only when run, except the few whose start-up time is their job.
import { build } from 'esbuild';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Verbs bundled into dist/cli.cjs all the same (still evaluated only when run): `mkt license
 * check` runs at every start of the app that embeds it, and loading it through the ESM loader
 * cost more than the check itself.
 */
const INLINE_VERBS = new Set(['commands/license/check.js']);

/** Leaves every other dynamic import() external, pointing at the tsc output beside the bundle. */
const lazyImports = {
  name: 'lazy-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      if (!args.path.startsWith('.')) return { path: args.path, external: true };
      const target = resolve(args.resolveDir, args.path);
      const rel = relative(join(root), target).split('\\').join('/');
      if (INLINE_VERBS.has(rel)) return undefined;
      return { path: `./${rel}`, external: true };
    });
  },
};

/**
 * commander requires node:child_process at load time for executable subcommands, which mkt
 * does not use; child_process pulls in net, dgram and the stream stack (several ms of every
 * start). This hands commander a stand-in that loads the real module on first use.
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'lazy-child-process', namespace: 'lazy' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({
      contents: "module.exports = { spawn: (...args) => require('node:child_process').spawn(...args) };",
      loader: 'js',
    }));
  },
};

await build({
  entryPoints: [join(root, 'src/cli/main.ts')],
  outfile: join(root, 'dist/cli.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  plugins: [lazyChildProcess, lazyImports],
  logLevel: 'warning',
}).catch(() => process.exit(1));

