// The monitor's PostgreSQL path loads no SQLite driver (issue 29): opening the store module, the
// daemon's store chooser and the cluster's leases leaves better-sqlite3 unloaded; the SQLite store
// loads it. Run in a fresh Node process, where nothing else has loaded it yet.
import { expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '../../..');
const url = (p: string): string => pathToFileURL(join(ROOT, p)).href;

it('the PostgreSQL monitor store, its leases and the store chooser load no better-sqlite3; the SQLite store does', () => {
  const script = `
    import { createRequire } from 'node:module';
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('better-sqlite3'));
    await import(${JSON.stringify(url('daemon/services/monitor/stores.ts'))});
    await import(${JSON.stringify(url('src/store/monitor-pg.ts'))});
    await import(${JSON.stringify(url('src/store/monitor-leases.ts'))});
    await import(${JSON.stringify(url('src/store/sql-pg.ts'))});
    const pg = loaded();
    await import(${JSON.stringify(url('src/store/monitor-sqlite.ts'))});
    console.log(JSON.stringify({ pg, sqlite: loaded() }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toEqual({ pg: false, sqlite: true });
});
