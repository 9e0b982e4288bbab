// Bundles the CLI's start-up path (entry, program, noun registrations, commander) into one
// CommonJS file, dist/cli.cjs, then writes its V8 code cache (scripts/code-cache.mjs). Node's ESM
// loader and per-file resolution cost more start-up time than the whole command tree; verbs stay
// separate ESM files in dist/, loaded by dynamic import() only when run, except the few whose
// start-up time is their job.
import { build } from 'esbuild';
import { renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeCodeCache } from './code-cache.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = join(root, 'dist/cli.cjs');

/**
 * Verbs bundled into dist/cli.cjs all the same (still evaluated only when run): `mkt license
 * check` runs at every start of the app that embeds it, and loading it through the ESM loader
 * cost more than the check itself.
 */
const INLINE_VERBS = new Set(['commands/license/check.js']);

/** The verbs left external, as esbuild prints their import() in the bundle. */
const externalImports = new Set();

/** Leaves every other dynamic import() external, pointing at the tsc output beside the bundle. */
const lazyImports = {
  name: 'lazy-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      if (!args.path.startsWith('.')) {
        externalImports.add(args.path);
        return { path: args.path, external: true };
      }
      const target = resolve(args.resolveDir, args.path);
      const rel = relative(join(root), target).split('\\').join('/');
      if (INLINE_VERBS.has(rel)) return undefined;
      externalImports.add(`./${rel}`);
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

const result = await build({
  entryPoints: [join(root, 'commands/root/main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  plugins: [lazyChildProcess, lazyImports],
  // bin/mkt compiles the bundle itself (to use the code cache) and passes __mktImport, since an
  // import() inside a vm.Script needs an experimental Node option; a plain require() of the bundle
  // gets Node's own import(). The directive first, so the bundle stays strict.
  banner: { js: '"use strict";\nvar __mktImport = typeof __mktImport === "function" ? __mktImport : (specifier) => import(specifier);' },
  write: false,
  logLevel: 'warning',
}).catch(() => process.exit(1));

// Every verb's import("./...") becomes __mktImport("./..."): exactly the ones esbuild left external.
let code = result.outputFiles[0].text;
let rewritten = 0;
code = code.replace(/\bimport\(("[^"]+")\)/g, (_, spec) => {
  if (!externalImports.has(JSON.parse(spec))) throw new Error(`unexpected import(${spec}) in the bundle`);
  rewritten++;
  return `__mktImport(${spec})`;
});
const left = code.split('\n').filter((l) => /\bimport\(/.test(l) && !l.startsWith('var __mktImport'));
if (left.length > 0 || rewritten === 0) {
  console.error(`bundle-cli: ${rewritten} verb imports rewritten, but import() left in:\n${left.join('\n')}`);
  process.exit(1);
}
// Written aside and renamed, so an mkt starting meanwhile reads the old bundle or the new one.
writeFileSync(`${outfile}.tmp`, code);
renameSync(`${outfile}.tmp`, outfile);
await writeCodeCache(root);
