// A local alert hook for monitor tests: an HTTP server on 127.0.0.1 that records every alert
// JSON a monitor POSTs to it, in order of arrival, and answers 204.
import { createServer } from 'node:http';
import type { Incident } from '../../src/store/monitor.js';
import { listenLocal } from './local-http.js';

/** An alert as a JSON hook receives it (docs/monitor.md, "Alerts"). */
export interface Alert {
  event: string;
  instance: string;
  target: string;
  label: string;
  incident: Incident;
}

export interface AlertHook {
  /** The URL to list under `alerts:` in a monitor's config. */
  url: string;
  /** Every alert received so far; the test reads it while the hook keeps appending. */
  alerts: Alert[];
  close(): Promise<void>;
}

export async function startAlertHook(): Promise<AlertHook> {
  const alerts: Alert[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      alerts.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Alert);
      res.writeHead(204).end();
    });
  });
  let close: () => Promise<void> | void = () => undefined;
  const base = await listenLocal(server, (c) => (close = c));
  return { url: `${base}/hook`, alerts, close: async () => close() };
}
