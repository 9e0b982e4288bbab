// Typed client of the marketplace license-key API (used by `mkt license`). Anonymous: the
// license key in the request body is the proof, and it never goes into a URL.
import { ApiError, HttpClient, type HttpClientOptions } from './http.js';
import type {
  DeactivateKeyResponse,
  KeyStatusResponse,
  LicenseHeartbeatResponse,
  LicenseVerifyResponse,
  ValidateKeyRequest,
  ValidateKeyResponse,
} from '../schemas/license.js';
import type { Jwks } from '../crypto/signing.js';

export class LicenseClient {
  readonly http: HttpClient;
  constructor(httpOrOptions: HttpClient | HttpClientOptions) {
    this.http = httpOrOptions instanceof HttpClient ? httpOrOptions : new HttpClient(httpOrOptions);
  }

  /** `entitlements` (issue 33): names the key must carry, else ENTITLEMENT_MISSING. */
  validate(req: ValidateKeyRequest): Promise<ValidateKeyResponse> {
    return this.http.json('POST', '/api/v1/keys/validate', { body: req });
  }
  status(key: string): Promise<KeyStatusResponse> {
    return this.http.json('POST', '/api/v1/keys/status', { body: { key } });
  }
  /** Frees a node-locked activation, or releases a floating seat (code RELEASED). */
  deactivate(key: string, machineId: string): Promise<DeactivateKeyResponse> {
    return this.http.json('POST', '/api/v1/keys/deactivate', { body: { key, machine_id: machineId } });
  }
  verify(key: string, machineFingerprint: string): Promise<LicenseVerifyResponse> {
    return this.http.json('POST', '/api/v1/license/verify', { body: { key, machine_fingerprint: machineFingerprint } });
  }
  /** Renews this machine's floating seat (`mkt license run` calls it at a third of the lease). */
  heartbeat(key: string, machineFingerprint: string): Promise<LicenseHeartbeatResponse> {
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
