// The sign-in limit of sync_auth: a client address with too many failed sign-ins (wrong
// password or unknown email) in a fixed window gets 429 with Retry-After until the window
// ends, before any password is checked. Windows live in the store, so instances share them.
import type { SyncStore } from '../../../../src/store/sync.js';
import type { Clock } from '../../../../src/util/clock.js';
import { HttpError } from '../../../plugins/errors.js';

export interface SignInLimit {
  /** Failed sign-ins allowed per window; the next attempt in the window answers 429. */
  failures: number;
  windowSeconds: number;
}

export const DEFAULT_SIGN_IN_LIMIT: SignInLimit = { failures: 10, windowSeconds: 900 };

export class SignInGuard {
  constructor(
    private readonly store: SyncStore,
    private readonly clock: Clock,
    private readonly limit: SignInLimit,
  ) {}

  private window(): { start: number; retryAfter: number } {
    const nowS = Math.floor(this.clock.now() / 1000);
    const start = nowS - (nowS % this.limit.windowSeconds);
    return { start, retryAfter: Math.max(1, start + this.limit.windowSeconds - nowS) };
  }

  /** Throws 429 when the client has used up its failures in this window. */
  async check(client: string): Promise<void> {
    const w = this.window();
    if ((await this.store.signInFailures(client, w.start)) >= this.limit.failures) {
      throw new HttpError(429, `too many failed sign-ins from this address; retry after ${w.retryAfter} s`, { 'retry-after': String(w.retryAfter) });
    }
  }

  async fail(client: string): Promise<void> {
    await this.store.recordSignInFailure(client, this.window().start);
  }
}
