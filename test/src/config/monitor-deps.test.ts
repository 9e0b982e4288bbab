// The monitor config's dependencies (`depends_on`, issue 32): parents read per target; an unknown
// name, the target itself and cycles of any length refused with FILE:LINE and the cycle spelled
// out; and `remind_every`, global and per target, at least 1m or 0 (off).
import { describe, expect, it } from 'vitest';
import { parseMonitorConfig } from '../../../src/config/monitor.js';
import { configProblems } from '../../helpers/monitor-config.js';

const target = (name: string, extra = ''): string => `  ${name}:\n    url: http://127.0.0.1/${name}\n${extra}`;

describe('depends_on', () => {
  it('lists the parents of a target, in order, once each; a single name is a list of one', () => {
    const c = parseMonitorConfig('targets:\n' + target('router') + target('dns') + target('web', '    depends_on: [router, dns, router]\n') + target('mail', '    depends_on: router\n'));
    expect(c.targets.find((t) => t.name === 'web')!.dependsOn).toEqual(['router', 'dns']);
    expect(c.targets.find((t) => t.name === 'mail')!.dependsOn).toEqual(['router']);
    expect(c.targets.find((t) => t.name === 'router')!.dependsOn).toBeUndefined();
  });

  it('refuses a name that is no target, with its line', () => {
    expect(configProblems('targets:\n' + target('web', '    depends_on:\n      - router\n'))).toEqual(['m.yaml:5: targets.web.depends_on.0 names no configured target: router']);
  });

  it('refuses the target itself', () => {
    expect(configProblems('targets:\n' + target('web', '    depends_on: [web]\n'))).toEqual(['m.yaml:4: targets.web.depends_on.0 names the target itself: a cycle web -> web']);
  });

  it('refuses a cycle of two, naming it', () => {
    expect(configProblems('targets:\n' + target('a', '    depends_on: [b]\n') + target('b', '    depends_on: [a]\n'))).toEqual(['m.yaml:4: targets.a.depends_on forms a cycle: a -> b -> a']);
  });

  it('refuses a longer cycle reached through a chain, each cycle once', () => {
    const yaml = 'targets:\n' + target('entry', '    depends_on: [a]\n') + target('a', '    depends_on: [b]\n') + target('b', '    depends_on: [c]\n') + target('c', '    depends_on: [a]\n') + target('x', '    depends_on: [y]\n') + target('y', '    depends_on: [x]\n');
    expect(configProblems(yaml)).toEqual(['m.yaml:7: targets.a.depends_on forms a cycle: a -> b -> c -> a', 'm.yaml:16: targets.x.depends_on forms a cycle: x -> y -> x']);
  });

  it('accepts a diamond (two paths to one parent are no cycle), and a chain of 10,000 targets without overflowing', () => {
    const diamond = parseMonitorConfig('targets:\n' + target('root') + target('l', '    depends_on: [root]\n') + target('r', '    depends_on: [root]\n') + target('leaf', '    depends_on: [l, r]\n'));
    expect(diamond.targets.find((t) => t.name === 'leaf')!.dependsOn).toEqual(['l', 'r']);
    let yaml = 'targets:\n' + target('t0');
    for (let i = 1; i < 10_000; i++) yaml += target(`t${i}`, `    depends_on: [t${i - 1}]\n`);
    const c = parseMonitorConfig(yaml);
    expect(c.targets[9_999]!.dependsOn).toEqual(['t9998']);
    // Closing the chain makes one cycle of 10,000.
    const problems = configProblems(yaml.replace('  t0:\n    url: http://127.0.0.1/t0\n', '  t0:\n    url: http://127.0.0.1/t0\n    depends_on: [t9999]\n'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^m\.yaml:4: targets\.t0\.depends_on forms a cycle: t0 -> t9999 -> t9998 -> .* -> t1 -> t0$/);
  });

  it('refuses an empty list and a name that is not a string', () => {
    expect(configProblems('targets:\n' + target('web', '    depends_on: []\n'))).toEqual(['m.yaml:4: targets.web.depends_on must list the targets this one depends on, like [router] (leave it out for none)']);
    expect(configProblems('targets:\n' + target('web', '    depends_on: [3]\n'))).toEqual(['m.yaml:4: targets.web.depends_on.0 must be a target name']);
  });
});

describe('remind_every', () => {
  it('is off when absent; global, per target, and 0 turns a target\'s off', () => {
    const off = parseMonitorConfig('targets:\n' + target('web'));
    expect(off.remindEveryMs).toBeUndefined();
    expect(off.targets[0]!.remindEveryMs).toBeUndefined();
    const c = parseMonitorConfig('remind_every: 1h\ntargets:\n' + target('web') + target('db', '    remind_every: 15m\n') + target('dev', '    remind_every: 0\n'));
    expect(c.remindEveryMs).toBe(3_600_000);
    expect(c.targets.map((t) => t.remindEveryMs)).toEqual([undefined, 900_000, 0]);
  });

  it('refuses less than a minute and what is no duration, with the line', () => {
    expect(configProblems('remind_every: 30s\n')).toEqual(['m.yaml:1: remind_every must be a duration of at least 1m (like 30m, 1h, 1d), or 0 for no reminders']);
    expect(configProblems('targets:\n' + target('web', '    remind_every: often\n'))).toEqual(['m.yaml:4: targets.web.remind_every must be a duration of at least 1m (like 30m, 1h, 1d), or 0 for no reminders']);
  });
});
