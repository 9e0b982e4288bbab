// Which services `mkt serve` can start, each loaded only when asked for, and the type of each
// one's options (the types only: loading the map loads no service).
import type { ServiceName } from '../../src/config/services.js';
import type { ServiceModule } from '../service.js';
import type { MarketplaceOptions } from './marketplace/options.js';
import type { MonitorOptions } from './monitor/options.js';
import type { TicketsOptions } from './tickets/options.js';

/** The options each service accepts (its schema's `Static` type). */
export interface ServiceOptionsMap {
  marketplace: MarketplaceOptions;
  monitor: MonitorOptions;
  tickets: TicketsOptions;
}

export const SERVICE_LOADERS: { [N in ServiceName]: () => Promise<ServiceModule<ServiceOptionsMap[N]>> } = {
  marketplace: () => import('./marketplace/index.js'),
  monitor: () => import('./monitor/index.js'),
  tickets: () => import('./tickets/index.js'),
};

export function availableServices(): ServiceName[] {
  return Object.keys(SERVICE_LOADERS) as ServiceName[];
}
