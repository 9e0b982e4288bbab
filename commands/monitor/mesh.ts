// meshRun: `mkt monitor mesh` — each instance, its targets and what it knows of its peers.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { monitorClient, type ClientFlags } from './shared.js';

export interface MeshOptions extends ClientFlags {
  factory: Factory;
}

export async function meshRun(opts: MeshOptions): Promise<void> {
  const { io } = opts.factory;
  const client = await monitorClient(opts.factory, opts);
  const mesh = await callApi('monitor', () => client.mesh());
  if (opts.json) {
    printJson(io, mesh);
    return;
  }
  const rows = Object.entries(mesh.instances).map(([name, e]) => {
    const targets = (e.targets ?? {}) as Record<string, { status: string }>;
    const statuses = Object.values(targets).map((t) => t.status);
    const down = statuses.filter((s) => s === 'down').length;
    const instance = e.instance as { version?: string } | undefined;
    return [name, instance?.version ?? '', e.error ? 'no data' : `${statuses.length - down}/${statuses.length} up`, (e.error as string | undefined) ?? ''];
  });
  printTable(io, ['instance', 'version', 'targets', 'note'], rows);
}
