// meshRun: `mkt monitor mesh` — each instance, its targets and what it knows of its peers.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { NegativeError } from '../../src/cli/errors.js';
import { ApiError } from '../../src/client/http.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { monitorClient, type ClientFlags } from './shared.js';

export interface MeshOptions extends ClientFlags {
  factory: Factory;
}

export async function meshRun(opts: MeshOptions): Promise<void> {
  const { io } = opts.factory;
  const client = await monitorClient(opts.factory, opts);
  const mesh = await callApi('monitor', async () => {
    try {
      return await client.mesh();
    } catch (err) {
      // The spec's 503 for a monitor without a mesh is a standing answer about its configuration,
      // not a server failing: exit 1 and say how to set one up. Any other 503 stays exit 3.
      if (err instanceof ApiError && err.status === 503 && /mesh is not enabled/i.test(err.message)) {
        throw new NegativeError(`monitor mesh: ${client.http.baseUrl} has no peer mesh configured`, 'add a `mesh:` section (its `peers`, or `peers: []` alone) to that monitor\'s configuration and reload it; see docs/monitor.md#mesh');
      }
      throw err;
    }
  });
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
