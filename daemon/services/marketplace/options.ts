// The options of `mkt serve marketplace`: its database and its areas' options (license, sync and
// its storage; notes has none), one schema `mkt serve` checks them against before it opens.
import type { Static } from '@sinclair/typebox';
import { DatabaseOptions, databaseUrlOption, optionsObject, type ServiceOptionsSpec } from '../../service-options.js';
import { LicenseOptionProperties, licenseOptionsFromEnv } from './license/options.js';
import { StorageOptionProperties, SyncOptionProperties, storageOptionsFromEnv, syncOptionsFromEnv } from './sync/options.js';

export const MarketplaceOptions = optionsObject({
  ...DatabaseOptions,
  ...LicenseOptionProperties,
  ...SyncOptionProperties,
  ...StorageOptionProperties,
});
export type MarketplaceOptions = Static<typeof MarketplaceOptions>;

export const marketplaceOptions: ServiceOptionsSpec<MarketplaceOptions> = {
  schema: MarketplaceOptions,
  fromEnv: (given, env) => ({
    ...given,
    databaseUrl: databaseUrlOption(given.databaseUrl, env),
    ...licenseOptionsFromEnv(given, env),
    ...syncOptionsFromEnv(given, env),
    ...storageOptionsFromEnv(given, env),
  }),
};
