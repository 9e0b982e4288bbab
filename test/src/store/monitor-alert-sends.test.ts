// Each alert channel's last send in the monitor store, on both engines: one row a channel,
// replaced by the next send, read back whole (a null incident and error included).
import { afterEach, expect, it } from 'vitest';
import { join } from 'node:path';
import type { MonitorStore } from '../../../src/store/monitor.js';
import { SqliteMonitorStore } from '../../../src/store/monitor-sqlite.js';
import { PgMonitorStore } from '../../../src/store/monitor-pg.js';
import { PgDatabase } from '../../../src/store/sql-pg.js';
import { ENGINES } from '../../helpers/engines.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';

const opened: MonitorStore[] = [];
const dirs: { remove(): void }[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const d of dirs.splice(0)) d.remove();
});

async function open(engine: string): Promise<MonitorStore> {
  let s: MonitorStore;
  if (engine === 'sqlite') {
    const d = tempDir();
    dirs.push(d);
    s = new SqliteMonitorStore(join(d.path, 'monitor.db'));
  } else s = await PgMonitorStore.open(await PgDatabase.open(await freshDatabaseUrl()));
  opened.push(s);
  return s;
}

for (const engine of ENGINES) {
  it(`[${engine}] the last send per channel: recorded, replaced, listed by name`, async () => {
    const s = await open(engine);
    expect((await s.alertSends.all()).size).toBe(0);
    await s.alertSends.record({ channel: 'mail', event: 'incident.opened', target: 'api', incidentId: 4, at: 1_764_000_000_000, ok: false, attempts: 4, error: 'SMTP ECONNECTION' });
    await s.alertSends.record({ channel: 'hook', event: 'incident.opened', target: 'api', at: 1_764_000_000_500, ok: true, attempts: 1 });
    await s.alertSends.record({ channel: 'mail', event: 'incident.resolved', target: 'web', incidentId: 5, at: 1_764_000_001_000, ok: true, attempts: 2 });
    const all = await s.alertSends.all();
    expect([...all.keys()]).toEqual(['hook', 'mail']);
    expect(all.get('mail')).toEqual({ channel: 'mail', event: 'incident.resolved', target: 'web', incidentId: 5, at: 1_764_000_001_000, ok: true, attempts: 2 });
    expect(all.get('hook')).toEqual({ channel: 'hook', event: 'incident.opened', target: 'api', at: 1_764_000_000_500, ok: true, attempts: 1 });
  });
}
