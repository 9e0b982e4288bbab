// Which services `mkt serve` can start, each loaded only when asked for.
import type { ServiceName } from '../../src/config/services.js';
import type { ServiceModule } from '../service.js';

export const SERVICE_LOADERS: Partial<Record<ServiceName, () => Promise<ServiceModule>>> = {
  marketplace: () => import('./marketplace/index.js'),
  monitor: () => import('./monitor/index.js'),
  tickets: () => import('./tickets/index.js'),
};

export function availableServices(): ServiceName[] {
  return Object.keys(SERVICE_LOADERS) as ServiceName[];
}
