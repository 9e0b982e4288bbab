// watchRun: `mkt monitor watch` — a live ink view of every target, refreshed on an interval;
// q or Ctrl-C leaves. Without a terminal it prints one snapshot and returns.
import React, { useEffect, useState } from 'react';
import { Box, Text, render, useApp, useInput } from 'ink';
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { toCliError } from '../../src/cli/api-errors.js';
import type { MonitorClient, TargetStatusJson } from '../../src/client/monitor.js';
import { monitorClient, pct } from './shared.js';
import { attention } from './detail.js';

export interface WatchOptions {
  factory: Factory;
  server?: string;
  interval?: string;
  json?: boolean;
  /** Stop after this many JSON lines (tests); default: until interrupted. */
  count?: number;
}

const COLORS: Record<string, string> = { operational: 'green', degraded: 'yellow', down: 'red' };

function Row({ name, s }: { name: string; s: TargetStatusJson }): React.JSX.Element {
  const status = s.latest?.status ?? 'no data';
  return (
    <Box>
      <Box width={22}>
        <Text>{name}</Text>
      </Box>
      <Box width={13}>
        <Text color={COLORS[status] ?? 'gray'}>{status}</Text>
      </Box>
      <Box width={10}>
        <Text>{pct(s.uptime_24h)}</Text>
      </Box>
      <Box width={9}>
        <Text>{s.latency_24h ? `${s.latency_24h.p50} ms` : '-'}</Text>
      </Box>
      <Text color="red">{attention(s)}</Text>
    </Box>
  );
}

function Watch({ client, everyMs, url }: { client: MonitorClient; everyMs: number; url: string }): React.JSX.Element {
  const { exit } = useApp();
  const [targets, setTargets] = useState<Record<string, TargetStatusJson>>({});
  const [error, setError] = useState<string | undefined>();
  const [at, setAt] = useState<string>('');
  useInput((input, key) => {
    if (input === 'q' || (key.ctrl && input === 'c')) exit();
  });
  useEffect(() => {
    let alive = true;
    const tick = async (): Promise<void> => {
      try {
        const r = await client.statusAll();
        if (!alive) return;
        setTargets(r.targets);
        setError(undefined);
        setAt(new Date().toISOString().slice(11, 19));
      } catch (err) {
        if (alive) setError((toCliError(err, 'monitor') as Error).message);
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), everyMs);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, [client, everyMs]);
  return (
    <Box flexDirection="column">
      <Text bold>
        {url} · updated {at || '…'} · every {everyMs / 1000} s · q to quit
      </Text>
      {error ? <Text color="red">{error}</Text> : null}
      {Object.entries(targets).map(([name, s]) => (
        <Row key={name} name={name} s={s} />
      ))}
    </Box>
  );
}

export async function watchRun(opts: WatchOptions): Promise<void> {
  const { io } = opts.factory;
  const seconds = Number(opts.interval ?? '5');
  if (!Number.isFinite(seconds) || seconds < 0.5) throw new UsageError(`--interval must be at least 0.5 seconds, got ${opts.interval}`);
  const client = await monitorClient(opts.factory, opts);
  if (opts.json) {
    // One JSON line per refresh (for jq and logs), until interrupted.
    for (let n = 0; opts.count === undefined || n < opts.count; n++) {
      if (n > 0) await new Promise((r) => setTimeout(r, seconds * 1000));
      const r = await client.statusAll().catch((err: unknown) => {
        throw toCliError(err, 'monitor');
      });
      io.stdout.write(JSON.stringify({ at: new Date().toISOString(), targets: r.targets }) + '\n');
    }
    return;
  }
  if (!io.stdout.isTTY || !io.stdin.isTTY) {
    const { statusRun } = await import('./status.js');
    await statusRun({ factory: opts.factory, server: opts.server });
    return;
  }
  const app = render(<Watch client={client} everyMs={seconds * 1000} url={client.http.baseUrl} />, { stdout: io.stdout as NodeJS.WriteStream, stdin: io.stdin as NodeJS.ReadStream, exitOnCtrlC: true });
  await app.waitUntilExit();
}
