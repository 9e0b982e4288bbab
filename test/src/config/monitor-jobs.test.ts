// The monitor config's heartbeat and tcp:// targets (issue 31): what each section reads into,
// and every mistake refused with its file and line.
import { describe, expect, it } from 'vitest';
import { parseMonitorConfig } from '../../../src/config/monitor.js';
import { configProblems } from '../../helpers/monitor-config.js';

const one = (yaml: string) => parseMonitorConfig(`targets:\n  t:\n${yaml}`).targets[0]!;

describe('heartbeat targets', () => {
  it('read a schedule in a zone, a period, a grace and a ping key', () => {
    expect(one('    heartbeat:\n      schedule: "0 3 * * *"\n      timezone: europe/berlin\n      grace: 30m\n').heartbeat).toEqual({ schedule: '0 3 * * *', timezone: 'Europe/Berlin', graceMs: 1_800_000 });
    expect(one('    heartbeat: { period: 1d }\n').heartbeat).toEqual({ periodMs: 86_400_000, timezone: 'UTC', graceMs: 3_600_000 });
    const t = one('    label: Backup\n    heartbeat: { period: 10m, grace: 1m, ping_key: abcdefghijklmnop-_09 }\n');
    expect(t).toMatchObject({ label: 'Backup', url: '', heartbeat: { periodMs: 600_000, graceMs: 60_000, pingKey: 'abcdefghijklmnop-_09' } });
  });

  it('refuse a url next to the heartbeat, and neither', () => {
    expect(configProblems('targets:\n  t:\n    url: http://x/\n    heartbeat: { period: 1h }\n')).toEqual(['m.yaml:3: targets.t.url cannot be given with heartbeat: a heartbeat target is pinged, not polled (give one of url, heartbeat)']);
    expect(configProblems('targets:\n  t:\n    label: x\n')).toEqual(['m.yaml:3: targets.t needs a url (http(s):// or tcp://host:port) or a heartbeat section']);
  });

  it('refuse a bad schedule, zone, both schedule and period, neither, and a short or repeated key', () => {
    expect(configProblems('targets:\n  t:\n    heartbeat:\n      schedule: "61 * * * *"\n')[0]).toMatch(/^m\.yaml:4: targets\.t\.heartbeat\.schedule is not a cron expression the monitor can read \(.*\): "61 \* \* \* \*"$/);
    expect(configProblems('targets:\n  t:\n    heartbeat:\n      schedule: "0 3 * * *"\n      timezone: Mars/Base\n')).toEqual(['m.yaml:5: targets.t.heartbeat.timezone is not a known IANA time zone (like Europe/Berlin or UTC): Mars/Base']);
    expect(configProblems('targets:\n  t:\n    heartbeat:\n      schedule: "0 3 * * *"\n      period: 1d\n')).toEqual(['m.yaml:5: targets.t.heartbeat.period cannot be given with schedule: give one']);
    expect(configProblems('targets:\n  t:\n    heartbeat:\n      grace: 1m\n')).toEqual(['m.yaml:4: targets.t.heartbeat needs a schedule (a cron expression like "0 3 * * *") or a period (like 1d)']);
    expect(configProblems('targets:\n  t:\n    heartbeat:\n      period: 1d\n      timezone: UTC\n')).toEqual(['m.yaml:5: targets.t.heartbeat.timezone applies only to a schedule']);
    expect(configProblems('targets:\n  t:\n    heartbeat:\n      period: 1d\n      ping_key: short\n')).toEqual(['m.yaml:5: targets.t.heartbeat.ping_key must be 16-128 URL-safe characters (letters, digits, - and _): it is the only secret of the ping URL']);
    expect(configProblems('targets:\n  t:\n    heartbeat:\n      period: 1d\n      ping_key: "abcdefghijklmnop/q"\n')).toHaveLength(1);
    expect(configProblems('targets:\n  a:\n    heartbeat: { period: 1d, ping_key: abcdefghijklmnopq }\n  b:\n    heartbeat:\n      period: 1d\n      ping_key: abcdefghijklmnopq\n')).toEqual(['m.yaml:7: targets.b.heartbeat.ping_key is the ping key of a too: each heartbeat target needs its own']);
  });

  it('refuse what needs an http url: headers, routes, conditions, degraded_after, a tls without a host', () => {
    const p = configProblems('targets:\n  t:\n    heartbeat: { period: 1h }\n    headers: { a: b }\n    routes: [{ path: /x }]\n    conditions: ["[STATUS] == 200"]\n    tls: {}\n');
    expect(p).toEqual([
      'm.yaml:6: targets.t.conditions apply only to an http(s) target',
      'm.yaml:4: targets.t.headers does not apply to a heartbeat target (it needs an http(s) url)',
      'm.yaml:5: targets.t.routes does not apply to a heartbeat target (it needs an http(s) url)',
      'm.yaml:7: targets.t.tls needs a host on a heartbeat target (there is no url to take it from)',
    ]);
    expect(one('    heartbeat: { period: 1h }\n    tls: { host: example.com }\n').tls).toEqual({ host: 'example.com', port: 443, warnDays: 14 });
  });
});

describe('tcp:// targets', () => {
  it('read host, port, send and expect (a substring or /regex/flags)', () => {
    expect(one('    url: tcp://127.0.0.1:6379\n    send: "PING\\r\\n"\n    expect: "+PONG"\n')).toMatchObject({ url: 'tcp://127.0.0.1:6379', tcp: { host: '127.0.0.1', port: 6379, send: 'PING\r\n', expect: { text: '+PONG' } } });
    expect(one('    url: tcp://[::1]:25\n    expect: "/^220 .*smtp/i"\n').tcp).toEqual({ host: '::1', port: 25, expect: { regex: '^220 .*smtp', flags: 'i' } });
    expect(one('    url: tcp://db.internal:5432\n').tcp).toEqual({ host: 'db.internal', port: 5432 });
  });

  it('take the tls host from the tcp url', () => {
    expect(one('    url: tcp://mail.example.com:465\n    tls: {}\n').tls).toEqual({ host: 'mail.example.com', port: 443, warnDays: 14 });
  });

  it('refuse a missing port, a path, a bad regex, send/expect on http, and http-only settings', () => {
    expect(configProblems('targets:\n  t:\n    url: tcp://host\n')).toEqual(['m.yaml:3: targets.t.url must be tcp://host:port with nothing after the port, got "tcp://host"']);
    expect(configProblems('targets:\n  t:\n    url: tcp://host:1/x\n')).toHaveLength(1);
    expect(configProblems('targets:\n  t:\n    url: tcp://host:1\n    expect: "/(/"\n')[0]).toMatch(/^m\.yaml:4: targets\.t\.expect is not a valid regular expression: /);
    expect(configProblems('targets:\n  t:\n    url: tcp://host:1\n    expect: "/x/g"\n')[0]).toMatch(/^m\.yaml:4: targets\.t\.expect is not a valid regular expression: the g and y flags/);
    expect(configProblems('targets:\n  t:\n    url: http://host/\n    send: "x"\n')).toEqual(['m.yaml:4: targets.t.send is only for tcp:// targets']);
    expect(configProblems('targets:\n  t:\n    url: tcp://host:1\n    headers: { a: b }\n')).toEqual(['m.yaml:4: targets.t.headers does not apply to a tcp:// target (it needs an http(s) url)']);
    expect(configProblems('targets:\n  t:\n    url: tcp://host:1\n    send: ""\n')).toHaveLength(1);
  });
});
