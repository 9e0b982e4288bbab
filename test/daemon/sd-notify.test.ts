// SystemdNotifier against a real AF_UNIX datagram socket: the sd_notify message formats, how
// NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID are read, when it stays silent, and that a blocked
// event loop stops the watchdog pings.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { monotonicUsec, notifyMessage, parseNotifySocket, parseWatchdog, SystemdNotifier } from '../../daemon/sd-notify.js';
import { captureLog } from '../helpers/log-capture.js';
import { listenNotify, type NotifySocket } from '../helpers/notify-socket.js';
import { waitFor } from '../helpers/wait.js';

let sock: NotifySocket | undefined;
let notifier: SystemdNotifier | undefined;

afterEach(() => {
  notifier?.close();
  sock?.close();
  notifier = sock = undefined;
});

/** Waits for the datagram whose STATUS is `marker`: datagrams on one socket arrive in order, so all sent before it are in. */
async function through(s: NotifySocket, n: SystemdNotifier, marker: string): Promise<string[]> {
  n.status(marker);
  await waitFor(async () => s.messages.some((m) => m.fields.STATUS === marker), `the ${marker} message`);
  return s.messages.map((m) => m.text).filter((t) => t !== `STATUS=${marker}`);
}

describe('NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID', () => {
  it('a path socket is used; an abstract one (@name), a relative path or one over 107 bytes turn notification off with the reason', () => {
    expect(parseNotifySocket(undefined)).toBeUndefined();
    expect(parseNotifySocket('')).toBeUndefined();
    expect(parseNotifySocket('/run/systemd/notify')).toEqual({ path: '/run/systemd/notify' });
    expect(parseNotifySocket('@/org/freedesktop/systemd1/notify/123')).toEqual({ off: expect.stringMatching(/is an abstract socket, which unix-dgram cannot address/) });
    expect(parseNotifySocket('run/notify')).toEqual({ off: 'NOTIFY_SOCKET run/notify is not an absolute path' });
    expect(parseNotifySocket('/' + 'x'.repeat(107))).toEqual({ off: 'NOTIFY_SOCKET is longer than 107 bytes' });
    expect(parseNotifySocket('/' + 'x'.repeat(106))).toEqual({ path: '/' + 'x'.repeat(106) });
    expect(parseNotifySocket('vsock:2:1234')).toEqual({ off: expect.stringMatching(/AF_VSOCK/) });
  });

  it('the watchdog pings every half WATCHDOG_USEC, only for the process WATCHDOG_PID names', () => {
    expect(parseWatchdog({}, 42)).toBeUndefined();
    expect(parseWatchdog({ WATCHDOG_USEC: '30000000' }, 42)).toEqual({ intervalMs: 15_000 });
    expect(parseWatchdog({ WATCHDOG_USEC: '400000', WATCHDOG_PID: '42' }, 42)).toEqual({ intervalMs: 200 });
    expect(parseWatchdog({ WATCHDOG_USEC: '400000', WATCHDOG_PID: '43' }, 42)).toBeUndefined();
    expect(parseWatchdog({ WATCHDOG_USEC: '1' }, 42)).toEqual({ intervalMs: 1 });
    for (const bad of ['0', '-5', '1.5', '30s', ' 1000', '1e6', '99999999999999999999']) {
      expect(parseWatchdog({ WATCHDOG_USEC: bad }, 42), bad).toEqual({ off: expect.stringMatching(/^WATCHDOG_USEC must be a positive whole number of microseconds/) });
    }
    expect(parseWatchdog({ WATCHDOG_USEC: '400000', WATCHDOG_PID: 'me' }, 42)).toEqual({ off: 'WATCHDOG_PID must be a process id, got "me"' });
  });

  it('a message is KEY=value lines; a STATUS text stays on its one line', () => {
    expect(notifyMessage([['READY', '1'], ['STATUS', 'monitor on http://127.0.0.1:7071']])).toBe('READY=1\nSTATUS=monitor on http://127.0.0.1:7071');
    expect(notifyMessage([['READY', '1'], ['STATUS', undefined]])).toBe('READY=1');
    expect(notifyMessage([['STATUS', 'bad\nREADY=1\tx']])).toBe('STATUS=bad READY=1 x');
    expect(notifyMessage([['MONOTONIC_USEC', 12n]])).toBe('MONOTONIC_USEC=12');
  });
});

describe('SystemdNotifier on a real datagram socket', () => {
  it('sends READY=1 with STATUS, RELOADING=1 with CLOCK_MONOTONIC µs, and STOPPING=1', async () => {
    sock = listenNotify();
    const log = captureLog();
    notifier = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: sock.path }, log.logger);
    expect(notifier.enabled).toBe(true);
    notifier.ready('monitor on http://127.0.0.1:7071');
    const before = monotonicUsec();
    notifier.reloading();
    const after = monotonicUsec();
    notifier.ready('reloaded');
    notifier.stopping('shutting down (SIGTERM)');
    await waitFor(async () => sock!.messages.length >= 4, 'four messages');
    const [ready, reloading, again, stopping] = sock.messages;
    expect(ready!.text).toBe('READY=1\nSTATUS=monitor on http://127.0.0.1:7071');
    expect(reloading!.text).toMatch(/^RELOADING=1\nMONOTONIC_USEC=\d+$/);
    const usec = BigInt(reloading!.fields.MONOTONIC_USEC!);
    expect(usec >= before && usec <= after).toBe(true);
    expect(again!.text).toBe('READY=1\nSTATUS=reloaded');
    expect(stopping!.text).toBe('STOPPING=1\nSTATUS=shutting down (SIGTERM)');
    expect(log.text()).toBe('');
  });

  it('MONOTONIC_USEC is CLOCK_MONOTONIC: the uptime clock of /proc/uptime, not the wall clock', async () => {
    const { readFileSync } = await import('node:fs');
    const uptimeUsec = BigInt(Math.round(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1e6));
    // /proc/uptime is CLOCK_BOOTTIME (suspended time included) in 10 ms steps: never behind CLOCK_MONOTONIC by more than a step.
    expect(monotonicUsec()).toBeLessThanOrEqual(uptimeUsec + 20_000n);
    expect(monotonicUsec()).toBeLessThan(BigInt(Date.now()) * 1000n);
  });

  it('pings WATCHDOG=1 from a timer until stopped', async () => {
    sock = listenNotify();
    notifier = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: '100000', WATCHDOG_PID: String(process.pid) }, captureLog().logger);
    expect(notifier.watchdogIntervalMs).toBe(50);
    notifier.startWatchdog();
    notifier.startWatchdog(); // a second start is no second timer
    await waitFor(async () => sock!.messages.length >= 5, 'five watchdog pings');
    notifier.stopWatchdog();
    // Pings sent before the stop may still be queued on the socket: the marker brings them all in.
    const pinged = await through(sock, notifier, 'stopped');
    expect(pinged.length).toBeGreaterThanOrEqual(5);
    expect(pinged.every((t) => t === 'WATCHDOG=1')).toBe(true);
    // Nothing to poll for when checking that nothing comes: six intervals pass, then another marker.
    await new Promise((r) => setTimeout(r, 300));
    const seen = await through(sock, notifier, 'later');
    expect(seen.filter((t) => t === 'WATCHDOG=1')).toHaveLength(pinged.length);
  });

  it('a blocked event loop sends no WATCHDOG=1 until it runs again (another process, so this one can read the socket meanwhile)', async () => {
    sock = listenNotify();
    const script = [
      `const { SystemdNotifier } = await import(${JSON.stringify(join(import.meta.dirname, '../../daemon/sd-notify.ts'))});`,
      'const n = SystemdNotifier.fromEnv(process.env, { warn: (...a) => console.error(...a) });',
      'n.startWatchdog();',
      // 0.5 s of pings, the loop held for 1.5 s, 0.5 s of pings, done.
      "setTimeout(() => { n.status('hang'); const end = Date.now() + 1500; while (Date.now() < end); n.status('free'); }, 500);",
      "setTimeout(() => { n.close(); }, 2500);",
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: '100000' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    await sock.drain();
    const texts = sock.messages.map((m) => m.text);
    const hang = texts.indexOf('STATUS=hang');
    const free = texts.indexOf('STATUS=free');
    expect(hang).toBeGreaterThan(0);
    // Not one ping while the loop was held; pings before it and after it.
    expect(free).toBe(hang + 1);
    expect(texts.slice(0, hang).filter((t) => t === 'WATCHDOG=1').length).toBeGreaterThanOrEqual(3);
    expect(texts.slice(free + 1).filter((t) => t === 'WATCHDOG=1').length).toBeGreaterThanOrEqual(3);
  });

  it('WATCHDOG_PID of another process: READY still goes out, never a WATCHDOG=1', async () => {
    sock = listenNotify();
    const log = captureLog();
    notifier = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: '20000', WATCHDOG_PID: String(process.pid + 1) }, log.logger);
    expect(notifier.watchdogIntervalMs).toBeUndefined();
    notifier.startWatchdog();
    notifier.ready('up');
    // Ten intervals of a 10 ms watchdog, had it run.
    await new Promise((r) => setTimeout(r, 100));
    expect(await through(sock, notifier, 'marker')).toEqual(['READY=1\nSTATUS=up']);
    expect(log.text()).toBe('');
  });

  it('an abstract NOTIFY_SOCKET: one warning line saying why, and every call a no-op', () => {
    const log = captureLog();
    notifier = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: '@mkt-test-notify', WATCHDOG_USEC: '100000' }, log.logger);
    expect(notifier.enabled).toBe(false);
    notifier.ready('x');
    notifier.startWatchdog();
    notifier.stopping();
    const lines = log.text().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: 'systemd notification is off', reason: expect.stringMatching(/@mkt-test-notify is an abstract socket/) });
  });

  it('unix-dgram missing (not built on this machine): one warning line, mkt runs on without notifying', () => {
    const log = captureLog();
    notifier = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: '/run/systemd/notify' }, log.logger, {
      load: () => {
        throw new Error("Cannot find module 'unix-dgram'\nRequire stack: ...");
      },
    });
    expect(notifier.enabled).toBe(false);
    notifier.ready('x');
    const lines = log.text().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'systemd notification is off', reason: "unix-dgram is not available: Cannot find module 'unix-dgram'" });
  });

  it('a socket nobody listens on: one warning with the errno name, not one per message', async () => {
    const gone = listenNotify();
    const path = gone.path;
    gone.close();
    const log = captureLog();
    notifier = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: path }, log.logger);
    notifier.ready('a');
    notifier.watchdog();
    notifier.watchdog();
    const lines = log.text().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'systemd notification failed', socket: path, err: expect.stringMatching(/^ENOENT /) });
  });
});
