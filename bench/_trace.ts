// Prints the SQL statements (and round trips) each scale-benchmark request costs on PostgreSQL (MKT_SQL_TRACE=1 on
// a real server), after `npm run build`: `node --import tsx bench/_trace.ts`.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startOwnPostgres } from '../test/helpers/pg-global.js';
import { seedForTrace } from './scale.js';

const own = await startOwnPostgres();
const c = new pg.Client({ connectionString: own.url });
await c.connect();
await c.query('CREATE DATABASE t');
await c.end();
const url = own.url.replace(/\/postgres$/, '/t');
const dir = mkdtempSync(join(tmpdir(), 'trace-'));
const env = { MKT_DATABASE_URL: url };
const seeded = await seedForTrace(dir, env);
const child = spawn(process.execPath, [join(import.meta.dirname, '../bin/mkt'), 'serve', 'marketplace', '--port', '0', '--data-dir', dir], { env: { ...process.env, ...env, MKT_SQL_TRACE: '1', MKT_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
let err = '';
child.stderr.on('data', (b: Buffer) => (err += b.toString()));
const base = await new Promise<string>((r) => child.stdout.on('data', (b: Buffer) => { out += b.toString(); const m = /listening on (\S+)/.exec(out); if (m) r(m[1]!); }));
const paths = await seeded.paths(base);
for (const p of paths) {
  for (let i = 0; i < 2; i++) {
    err = '';
    const v = p.variants?.[0];
    const body = (v?.body ?? p.body)?.replaceAll('{{n}}', String(Date.now() + i));
    const res = await fetch(base + p.path, { method: p.method, headers: { ...p.headers, ...v?.headers }, body });
    await res.text();
    await new Promise((r) => setTimeout(r, 50));
    // A line "SQL + ..." went in the same round trip as the statement before it.
    const lines = err.split('\n').filter((l) => l.startsWith('SQL '));
    const trips = lines.filter((l) => !l.startsWith('SQL + ')).length;
    if (i === 1) console.log(`== ${p.name} (${res.status}): ${lines.length} statements in ${trips} round trips\n${err}`);
  }
}
child.kill('SIGKILL');
await own.close();
process.exit(0);
