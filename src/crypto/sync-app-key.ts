// Sync app API keys: `mkt_app_` + 32 random bytes (base64url). The key is public (apps ship it),
// yet only its SHA-256 is stored, so the data dir never holds a usable copy.
import { hash, randomBytes } from 'node:crypto';

export const APP_KEY_PREFIX = 'mkt_app_';

export function newAppKey(): string {
  return APP_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** What the store keeps and looks keys up by. */
export function appKeyHash(key: string): string {
  // One-shot, as each request with an app key computes it: a Hash object costs five times as much.
  return hash('sha256', key, 'hex');
}
