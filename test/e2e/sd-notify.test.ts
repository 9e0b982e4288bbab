// `mkt serve monitor` (the real binary) under a stand-in for systemd: NOTIFY_SOCKET is a real
// datagram socket this test binds. READY=1 once it listens, WATCHDOG=1 every half WATCHDOG_USEC,
// RELOADING=1 then READY=1 on SIGHUP (a failed reload too), STOPPING=1 on SIGTERM (issue 32).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monotonicUsec } from '../../daemon/sd-notify.js';
import { listenNotify, type NotifyMessage, type NotifySocket } from '../helpers/notify-socket.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const mkt = join(import.meta.dirname, '../../bin/mkt');
const dir = tempDir();
const configPath = join(dir.path, 'monitor.yaml');
const CONFIG = 'name: sd\ntoken: sd-token\ntargets:\n  site:\n    url: http://127.0.0.1:9/\n    interval: 1h\n';

let sock: NotifySocket;
let child: ChildProcess;
let exited: Promise<NodeJS.Signals | number | null>;
let output = '';
/** When the `listening on` line arrived (performance.now(), as the notify messages' `at`). */
let listeningAt: number | undefined;
let url = '';

const sent = (key: string): NotifyMessage[] => sock.messages.filter((m) => m.fields[key] !== undefined);

async function statusCode(): Promise<number> {
  return (await fetch(`${url}/api/status`, { headers: { authorization: 'Bearer sd-token' } })).status;
}

beforeAll(async () => {
  writeFileSync(configPath, CONFIG);
  sock = listenNotify();
  child = spawn(process.execPath, [mkt, 'serve', 'monitor', '--port', '0', '--data-dir', join(dir.path, 'data'), '--config', configPath], {
    // No WATCHDOG_PID: the test cannot know the child's pid before it starts (systemd can).
    env: { ...process.env, MKT_LOG_LEVEL: 'info', NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: '400000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  child.stdout!.on('data', (c: Buffer) => {
    output += c.toString();
    const m = /^listening on (http:\/\/\S+)$/m.exec(output);
    if (m && listeningAt === undefined) {
      listeningAt = performance.now();
      url = m[1]!;
    }
  });
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  await waitFor(async () => url !== '' || child.exitCode !== null, 'listening on', 60_000);
  if (!url) throw new Error(`mkt serve monitor exited before listening:\n${output}`);
}, 90_000);

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await exited;
  sock.close();
  dir.remove();
});

describe('mkt serve monitor under systemd (sd_notify)', () => {
  it('READY=1 comes once, after `listening on`, with a STATUS naming the service and its address; the server answers then', async () => {
    const ready = await waitFor(async () => sent('READY')[0], 'READY=1', 30_000);
    expect(ready.text).toBe(`READY=1\nSTATUS=monitor on ${url}`);
    expect(ready.at).toBeGreaterThanOrEqual(listeningAt!);
    expect(await statusCode()).toBe(200);
    expect(sent('READY')).toHaveLength(1);
    // Nothing else was said before it: no RELOADING, no STOPPING, no warning logged.
    expect(sock.messages.slice(0, sock.messages.indexOf(ready))).toEqual([]);
    expect(output).not.toMatch(/systemd (notification|watchdog)/);
  });

  it('WATCHDOG=1 about every 200 ms with WATCHDOG_USEC=400000', async () => {
    const from = performance.now();
    const windowMs = 2000;
    // The window is over once a ping arrives after it.
    await waitFor(async () => sent('WATCHDOG').some((m) => m.at >= from + windowMs), 'a ping after the window', 30_000);
    const pings = sent('WATCHDOG').filter((m) => m.at >= from && m.at < from + windowMs);
    expect(pings.every((m) => m.text === 'WATCHDOG=1')).toBe(true);
    // 10 expected; a loaded machine delays timers (fewer), never exact.
    expect(pings.length).toBeGreaterThanOrEqual(5);
    expect(pings.length).toBeLessThanOrEqual(13);
  });

  it('SIGHUP: RELOADING=1 with CLOCK_MONOTONIC µs then READY=1; a bad file: READY=1 all the same, STATUS says the previous configuration serves', async () => {
    const before = monotonicUsec();
    child.kill('SIGHUP');
    const ok = await waitFor(async () => (sent('READY').length >= 2 ? sent('READY')[1] : undefined), 'READY=1 after the reload', 30_000);
    const after = monotonicUsec();
    const reloading = sent('RELOADING');
    expect(reloading).toHaveLength(1);
    expect(reloading[0]!.text).toMatch(/^RELOADING=1\nMONOTONIC_USEC=\d+\nSTATUS=reloading configuration; monitor on http:/);
    // One CLOCK_MONOTONIC for every process on the machine: the child's reading lies between ours.
    const usec = BigInt(reloading[0]!.fields.MONOTONIC_USEC!);
    expect(usec >= before && usec <= after).toBe(true);
    expect(sock.messages.indexOf(reloading[0]!)).toBeLessThan(sock.messages.indexOf(ok));
    expect(ok.text).toBe(`READY=1\nSTATUS=monitor on ${url}`);
    // Log lines leave in buffers (up to 100 ms later): the datagram may come first.
    await waitFor(async () => /configuration reloaded/.test(output), 'the reload log line', 10_000);

    writeFileSync(configPath, CONFIG.replace('url: http://127.0.0.1:9/', 'url: not a url'));
    child.kill('SIGHUP');
    const failed = await waitFor(async () => (sent('READY').length >= 3 ? sent('READY')[2] : undefined), 'READY=1 after the failed reload', 30_000);
    expect(sent('RELOADING')).toHaveLength(2);
    expect(sock.messages.indexOf(sent('RELOADING')[1]!)).toBeLessThan(sock.messages.indexOf(failed));
    expect(failed.text).toBe(`READY=1\nSTATUS=reload failed (monitor): serving the previous configuration; monitor on ${url}`);
    expect(await statusCode()).toBe(200);
    writeFileSync(configPath, CONFIG);
  });

  it('SIGTERM: STOPPING=1, the last message, and the process exits cleanly (the notify socket does not hold it)', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const stopping = await waitFor(async () => sent('STOPPING')[0], 'STOPPING=1', 10_000);
    expect(stopping.text).toBe('STOPPING=1\nSTATUS=shutting down (SIGTERM)');
    // Datagrams arrive in the order sent: the watchdog stopped with it.
    await sock.drain();
    expect(sock.messages.at(-1)).toBe(stopping);
    // The pipe may still hold the last log lines when 'exit' fires.
    await waitFor(async () => /"msg":"stopped"/.test(output), 'the last log line', 10_000);
  });
});
