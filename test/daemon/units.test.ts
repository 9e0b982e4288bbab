// The systemd units in daemon/: supervised by sd_notify (Type=notify, a watchdog, reload by
// SIGHUP), every hardening line kept, and `systemd-analyze security` rating them 2.0 or better.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const daemonDir = join(import.meta.dirname, '../../daemon');
const UNITS = ['mkt-marketplace.service', 'mkt-monitor.service', 'mkt-tickets.service'];

/** The [Service] section's settings, KEY -> every value it is given. */
function serviceSettings(unit: string): Map<string, string[]> {
  const text = readFileSync(join(daemonDir, unit), 'utf8');
  const section = text.slice(text.indexOf('[Service]'), text.indexOf('[Install]'));
  const settings = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) settings.set(m[1]!, [...(settings.get(m[1]!) ?? []), m[2]!]);
  }
  return settings;
}

const HARDENING: Record<string, string> = {
  NoNewPrivileges: 'yes',
  ProtectSystem: 'strict',
  ProtectHome: 'yes',
  PrivateTmp: 'yes',
  PrivateDevices: 'yes',
  ProtectKernelTunables: 'yes',
  ProtectKernelModules: 'yes',
  ProtectKernelLogs: 'yes',
  ProtectControlGroups: 'yes',
  ProtectClock: 'yes',
  ProtectHostname: 'yes',
  RestrictSUIDSGID: 'yes',
  RestrictRealtime: 'yes',
  RestrictNamespaces: 'yes',
  LockPersonality: 'yes',
  RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
  CapabilityBoundingSet: '',
  AmbientCapabilities: '',
  SystemCallArchitectures: 'native',
  SystemCallFilter: '@system-service',
  UMask: '0077',
};

/** systemd-analyze, when this machine has it (the units' own checks run everywhere). */
const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));

describe.each(UNITS)('daemon/%s', (unit) => {
  const s = serviceSettings(unit);

  it('is supervised: Type=notify, NotifyAccess=main, WatchdogSec=30s, reload by SIGHUP, restarted on failure', () => {
    expect(s.get('Type')).toEqual(['notify']);
    expect(s.get('NotifyAccess')).toEqual(['main']);
    expect(s.get('WatchdogSec')).toEqual(['30s']);
    expect(s.get('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(s.get('Restart')).toEqual(['on-failure']);
    expect(s.get('ExecStart')![0]).toMatch(/^\/usr\/bin\/mkt serve (marketplace|monitor|tickets) /);
  });

  it('keeps every hardening line', () => {
    for (const [key, value] of Object.entries(HARDENING)) expect(s.get(key), key).toEqual([value]);
  });

  it.skipIf(!analyze)('systemd-analyze security rates it 2.0 or better', () => {
    const out = execFileSync(analyze!, ['security', '--offline=true', join(daemonDir, unit)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const m = /Overall exposure level for \S+: (\d+\.\d+)/.exec(out);
    expect(m, out).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(2.0);
  });
});
