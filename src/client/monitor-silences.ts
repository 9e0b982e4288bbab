// The monitor's silences API for `mkt monitor silence`: make one (a target or every target, for a
// duration, with a reason), list the active ones, end one. Behind the API token.
import type { HttpClient } from './http.js';
import type { SilenceJson } from '../schemas/monitor.js';

export type { SilenceJson };

export interface NewSilence {
  /** A target name; undefined with `all`. */
  target?: string;
  all?: true;
  /** `90m`, `2h`, `1d` or seconds; the server takes 1m to 30d. */
  duration: string;
  reason: string;
}

export class SilencesClient {
  constructor(private readonly http: HttpClient) {}

  add(s: NewSilence): Promise<SilenceJson> {
    const body = s.all ? { all: true, duration: s.duration, reason: s.reason } : { target: s.target, duration: s.duration, reason: s.reason };
    return this.http.json('POST', '/api/silences', { body });
  }

  list(): Promise<{ silences: SilenceJson[] }> {
    return this.http.json('GET', '/api/silences');
  }

  async remove(id: string): Promise<void> {
    await this.http.json('DELETE', `/api/silences/${encodeURIComponent(id)}`);
  }
}
