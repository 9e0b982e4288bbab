// Typed client of the marketplace license-key API (used by `mkt license`). Anonymous: the
// license key in the request body is the proof, and it never goes into a URL.
import { ApiError, HttpClient, type HttpClientOptions } from './http.js';
import type {
  DeactivateKeyResponse,
  KeyStatusLicense,
  KeyStatusResponse,
  LicenseVerifyResponse,
  ValidateKeyRequest,
  ValidateKeyResponse,
} from '../schemas/license.js';
import type { Jwks } from '../crypto/signing.js';

/**
 * Issue 33's lease fields, typed here as optional so that this client reads both a server that
 * sends them and an older one that does not (a missing field reads as null).
 */
export interface LeaseFields {
  /** RFC 3339: when this machine's floating seat lapses unless renewed; null for node-locked. */
  lease_expires_at?: string | null;
  /** With TOO_MANY_ACTIVATIONS on a floating key: seconds until the earliest lease ends (>= 1). */
  retry_after?: number | null;
}

/** The license summary with the seat policy (issue 33); absent fields mean an older server. */
export type LeasedLicense = KeyStatusLicense & {
  activation_policy?: 'node-locked' | 'floating' | string;
  lease_seconds?: number | null;
  entitlements?: string[];
  suspended_at?: string | null;
};

export type ValidateAnswer = Omit<ValidateKeyResponse, 'license'> & LeaseFields & { license: LeasedLicense | null };
export type VerifyAnswer = LicenseVerifyResponse & LeaseFields & { entitlements?: string[] | null };
export type DeactivateAnswer = DeactivateKeyResponse & { retry_after?: number | null; next_allowed_at?: string | null };

/** `POST /api/v1/license/heartbeat`: RENEWED, or why not (MACHINE_NOT_ACTIVATED: the seat is gone). */
export interface HeartbeatAnswer {
  success: boolean;
  message: string;
  code?: string;
  lease_expires_at?: string | null;
}

export class LicenseClient {
  readonly http: HttpClient;
  constructor(httpOrOptions: HttpClient | HttpClientOptions) {
    this.http = httpOrOptions instanceof HttpClient ? httpOrOptions : new HttpClient(httpOrOptions);
  }

  /** `entitlements` (issue 33): names the key must carry, else ENTITLEMENT_MISSING. */
  validate(req: ValidateKeyRequest & { entitlements?: string[] }): Promise<ValidateAnswer> {
    return this.http.json('POST', '/api/v1/keys/validate', { body: req });
  }
  status(key: string): Promise<KeyStatusResponse> {
    return this.http.json('POST', '/api/v1/keys/status', { body: { key } });
  }
  /** Frees a node-locked activation, or releases a floating seat (code RELEASED). */
  deactivate(key: string, machineId: string): Promise<DeactivateAnswer> {
    return this.http.json('POST', '/api/v1/keys/deactivate', { body: { key, machine_id: machineId } });
  }
  verify(key: string, machineFingerprint: string): Promise<VerifyAnswer> {
    return this.http.json('POST', '/api/v1/license/verify', { body: { key, machine_fingerprint: machineFingerprint } });
  }
  /** Renews this machine's floating seat (`mkt license run` calls it at a third of the lease). */
  heartbeat(key: string, machineFingerprint: string): Promise<HeartbeatAnswer> {
    return this.http.json('POST', '/api/v1/license/heartbeat', { body: { key, machine_fingerprint: machineFingerprint } });
  }
  jwks(): Promise<Jwks> {
    return this.http.json('GET', '/api/v1/license/jwks.json');
  }

  /** The rendered license text; a key (optional) personalises it via `Authorization: License`. */
  async text(itemId: string, key?: string): Promise<string> {
    const headers: Record<string, string> = { accept: 'text/plain' };
    if (key) headers.authorization = `License ${key}`;
    const res = await this.http.send<unknown>('GET', `/api/v1/items/${encodeURIComponent(itemId)}/license.txt`, { headers });
    if (res.status < 200 || res.status > 299) {
      const b = res.body as { error?: unknown };
      throw new ApiError(res.status, typeof b === 'object' && b && typeof b.error === 'string' ? b.error : `HTTP ${res.status}`, res.body, res.headers);
    }
    return String(res.body);
  }
}
