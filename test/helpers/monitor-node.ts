// Starts a real monitor in this process on 127.0.0.1 port 0 from a YAML text, with its log
// captured, plus small HTTP helpers.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startService, type RunningService } from '../../daemon/start.js';
import { createLogger } from '../../daemon/logger.js';
import type { MonitorOptions } from '../../daemon/services/monitor/options.js';

/** A snapshot (one check or heartbeat turn) as `/api/status/{target}` lists it in `recent` and `latest`. */
export interface SnapshotJson {
  status: string;
  checked_at: string;
  response_time_ms: number;
  error?: string;
  maintenance?: boolean;
  details?: Record<string, unknown>;
}

export interface MonitorNode {
  url: string;
  dataDir: string;
  configPath: string;
  service: RunningService;
  logs: string[];
  get(path: string, token?: string | null): Promise<{ status: number; body: any; headers: Headers }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests inspect bodies field by field
  stop(): Promise<void>;
}

export async function startMonitor(dataDir: string, yaml: string, flags: MonitorOptions = {}, env: NodeJS.ProcessEnv = {}): Promise<MonitorNode> {
  const configPath = join(dataDir, 'monitor.yaml');
  writeFileSync(configPath, yaml);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      logs.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  const service = await startService('monitor', { host: '127.0.0.1', port: 0, dataDir, configPath, options: { ...flags }, env, logger: createLogger({ level: 'debug', stream: sink, pretty: false }), out: sink });
  return {
    url: service.url,
    dataDir,
    configPath,
    service,
    logs,
    async get(path, token = 'mon-token') {
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      const res = await fetch(service.url + path, { headers });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // text bodies (metrics, dashboard)
      }
      return { status: res.status, body, headers: res.headers };
    },
    stop: () => service.close(),
  };
}
