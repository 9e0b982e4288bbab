// watchRun: `mkt monitor watch` — a live ink view of every target, refreshed on an interval;
// q or Ctrl-C leaves. Without a terminal it prints one snapshot and returns.
import React, { useEffect, useState } from 'react';
import { Box, Text, render, useApp, useInput } from 'ink';
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { colorEnabled } from '../../src/cli/io.js';
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

/** The columns: their headings (as `mkt monitor status` names them) and widths. */
const COLUMNS = [
  ['TARGET', 22],
  ['STATUS', 13],
  ['UPTIME 24H', 12],
  ['P50', 9],
  ['NOTE', 0],
] as const;

/** One line of cells in the columns' widths; colour only when `color` allows it (NO_COLOR). */
function Line({ cells, colors = [], bold = false, color }: { cells: string[]; colors?: (string | undefined)[]; bold?: boolean; color: boolean }): React.JSX.Element {
  return (
    <Box>
      {COLUMNS.map(([, width], i) => {
        const text = (
          <Text key={i} bold={bold && color} color={color ? colors[i] : undefined}>
            {cells[i] ?? ''}
          </Text>
        );
        return width ? (
          <Box key={i} width={width}>
            {text}
          </Box>
        ) : (
          text
        );
      })}
    </Box>
  );
}

function Row({ name, s, color }: { name: string; s: TargetStatusJson; color: boolean }): React.JSX.Element {
  const status = s.latest?.status ?? 'no data';
  return <Line color={color} cells={[name, status, pct(s.uptime_24h), s.latency_24h ? `${s.latency_24h.p50} ms` : '-', attention(s)]} colors={[undefined, COLORS[status] ?? 'gray', undefined, undefined, 'red']} />;
}

function Watch({ client, everyMs, url, color }: { client: MonitorClient; everyMs: number; url: string; color: boolean }): React.JSX.Element {
  const { exit } = useApp();
  const [targets, setTargets] = useState<Record<string, TargetStatusJson> | undefined>();
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
  const rows = Object.entries(targets ?? {});
  return (
    <Box flexDirection="column">
      <Text bold={color}>
        {url} · updated {at || '…'} · every {everyMs / 1000} s · q to quit
      </Text>
      {error ? <Text color={color ? 'red' : undefined}>{error}</Text> : null}
      {targets && rows.length === 0 ? <Text>no targets configured on {url}</Text> : null}
      {rows.length > 0 ? <Line color={color} bold cells={COLUMNS.map(([h]) => h)} /> : null}
      {rows.map(([name, s]) => (
        <Row key={name} name={name} s={s} color={color} />
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
  // No console patching: commands never write through `console`, and the view draws on io.stdout.
  const app = render(<Watch client={client} everyMs={seconds * 1000} url={client.http.baseUrl} color={colorEnabled(io)} />, { stdout: io.stdout as NodeJS.WriteStream, stdin: io.stdin as NodeJS.ReadStream, exitOnCtrlC: true, patchConsole: false });
  await app.waitUntilExit();
}
