// The options of `mkt serve monitor`: the schema `mkt serve` checks them against before the
// monitor opens. MKT_MONITOR_TOKEN stays beside the config's token, re-read with it on SIGHUP.
import { Type, type Static } from '@sinclair/typebox';
import { DatabaseOptions, databaseUrlOption, optionsObject, type ServiceOptionsSpec } from '../../service-options.js';

export const MonitorOptions = optionsObject({
  ...DatabaseOptions,
  /** Trusted CA (PEM) for TLS checks in addition to the system's; tests use a generated one. */
  tlsCa: Type.Optional(Type.String()),
  /** Alert retry delays; tests shorten them. */
  alertBackoffMs: Type.Optional(Type.Array(Type.Number())),
});
export type MonitorOptions = Static<typeof MonitorOptions>;

export const monitorOptions: ServiceOptionsSpec<MonitorOptions> = {
  schema: MonitorOptions,
  fromEnv: (given, env) => ({ ...given, databaseUrl: databaseUrlOption(given.databaseUrl, env) }),
};
