// The options of `mkt serve tickets`: the schema `mkt serve` checks them against before the
// tracker opens. The token's variable and file stay in token.ts's chain, whose source is logged.
import { Type, type Static } from '@sinclair/typebox';
import { optionsObject, type ServiceOptionsSpec } from '../../service-options.js';

export const TicketsOptions = optionsObject({
  /** `--token`; else MKT_TICKETS_TOKEN, else `<data-dir>/token`, else generated (token.ts). */
  token: Type.Optional(Type.String()),
  /** `--peer` (repeatable); an empty list means the config's peers. */
  peers: Type.Optional(Type.Array(Type.String())),
  /** `--sync-interval` in milliseconds; default the config's `sync_interval_seconds`, else 30 s. */
  syncIntervalMs: Type.Optional(Type.Number()),
  /** Tests shorten the overlap window; see sync.ts. */
  syncOverlapMs: Type.Optional(Type.Number()),
  /** `--tombstone-max-age` in milliseconds; default the config's `tombstone_max_age`, else 90 days. */
  tombstoneMaxAgeMs: Type.Optional(Type.Number()),
  /** Tests ask for small pull pages, to follow many of them. */
  syncPullLimit: Type.Optional(Type.Integer()),
});
export type TicketsOptions = Static<typeof TicketsOptions>;

export const ticketsOptions: ServiceOptionsSpec<TicketsOptions> = { schema: TicketsOptions };
