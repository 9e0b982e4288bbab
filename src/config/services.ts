// The services mkt knows: names, default ports and environment variable names.
export const SERVICES = ['marketplace', 'monitor', 'tickets'] as const;
export type ServiceName = (typeof SERVICES)[number];

export const DEFAULT_PORTS: Record<ServiceName, number> = {
  marketplace: 7070,
  monitor: 7071,
  tickets: 7072,
};

export function isServiceName(s: string): s is ServiceName {
  return (SERVICES as readonly string[]).includes(s);
}

export function envPrefix(service: ServiceName): string {
  return `MKT_${service.toUpperCase()}`;
}
