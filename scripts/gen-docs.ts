// Regenerates completions/ and man/ from the command tree (`npm run gen`).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFactory } from '../src/cli/factory.js';
import { buildProgram } from '../commands/root/program.js';
import { renderCompletion } from '../src/cli/completion.js';
import { renderManPages } from '../src/cli/manpage.js';

const root = join(import.meta.dirname, '..');
const program = buildProgram(createFactory());
mkdirSync(join(root, 'completions'), { recursive: true });
writeFileSync(join(root, 'completions', 'mkt.bash'), renderCompletion(program, 'bash'));
writeFileSync(join(root, 'completions', '_mkt'), renderCompletion(program, 'zsh'));
writeFileSync(join(root, 'completions', 'mkt.fish'), renderCompletion(program, 'fish'));
const manDir = join(root, 'man');
mkdirSync(manDir, { recursive: true });
for (const f of readdirSync(manDir)) if (f.endsWith('.1')) rmSync(join(manDir, f));
for (const [name, text] of renderManPages(program)) writeFileSync(join(manDir, name), text);
console.log('completions/ and man/ regenerated');
