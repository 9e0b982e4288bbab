// `GET /api/alerts` for `mkt monitor alerts`: each alert channel and its last send.
import type { HttpClient } from './http.js';

export interface AlertLastSendJson {
  event: string;
  target: string;
  incident_id: number | null;
  at: string;
  ok: boolean;
  attempts: number;
  error: string | null;
}

export interface AlertChannelsJson {
  channels: { name: string; type: string; last: AlertLastSendJson | null }[];
}

export function alertChannels(http: HttpClient): Promise<AlertChannelsJson> {
  return http.json('GET', '/api/alerts');
}
