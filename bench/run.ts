// `npm run bench -- <name>...`: runs bench/<name>.ts (each exports run()); no name runs all.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = import.meta.dirname;
const available = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !available.includes(w));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  process.exit(2);
}
// Parts of another bench (monitor.ts runs monitor-heartbeat.ts), and the soak (half an hour at
// its defaults, issue 35): run only by name.
const parts = new Set(['monitor-heartbeat', 'soak']);
for (const name of wanted.length ? wanted : available.filter((n) => !parts.has(n))) {
  console.log(`\n== bench ${name} ==`);
  const mod = (await import(pathToFileURL(join(dir, `${name}.ts`)).href)) as { run(): Promise<void> };
  await mod.run();
}
process.exit(0);
