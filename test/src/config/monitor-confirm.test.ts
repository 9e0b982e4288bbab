// The monitor config's mesh confirmation (`confirm: {quorum: N}`, issue 15): global and per
// target, and a quorum that could never be reached refused with its file and line.
import { describe, expect, it } from 'vitest';
import { parseMonitorConfig } from '../../../src/config/monitor.js';
import { configProblems } from '../../helpers/monitor-config.js';

const MESH = 'mesh:\n  peers:\n    - { name: b, url: "http://127.0.0.1:1" }\n    - { name: c, url: "http://127.0.0.1:2" }\n';
const TARGETS = 'targets:\n  api:\n    url: http://127.0.0.1/h\n  db:\n    url: http://127.0.0.1/d\n    confirm: { quorum: 3 }\n';

describe('confirm', () => {
  it('is absent by default: each instance decides alone', () => {
    const c = parseMonitorConfig(MESH + 'targets:\n  api:\n    url: http://127.0.0.1/h\n');
    expect(c.confirm).toBeUndefined();
    expect(c.targets[0]!.confirm).toBeUndefined();
  });

  it('a global quorum is the default for every target; a target may set its own', () => {
    const c = parseMonitorConfig('confirm: { quorum: 2 }\n' + MESH + TARGETS);
    expect(c.confirm).toEqual({ quorum: 2 });
    expect(c.targets.find((t) => t.name === 'api')!.confirm).toBeUndefined();
    expect(c.targets.find((t) => t.name === 'db')!.confirm).toEqual({ quorum: 3 });
  });

  it('quorum 1 is allowed without a mesh (this instance alone)', () => {
    expect(parseMonitorConfig('confirm: { quorum: 1 }\n').confirm).toEqual({ quorum: 1 });
  });

  it('refuses a quorum above 1 without a mesh, naming the file and key', () => {
    expect(configProblems('confirm:\n  quorum: 2\n')).toEqual(['m.yaml:2: confirm.quorum is 2, but without a mesh: section this instance is the only vantage point (add mesh peers, or use 1)']);
  });

  it('refuses a quorum above the vantage points there are (this instance and its peers)', () => {
    expect(configProblems(MESH + 'confirm: { quorum: 4 }\n')).toEqual(['m.yaml:5: confirm.quorum is 4, but there are only 3 vantage points (this instance and 2 mesh peers)']);
    expect(configProblems(MESH + 'targets:\n  api:\n    url: http://127.0.0.1/h\n    confirm:\n      quorum: 5\n')).toEqual(['m.yaml:9: targets.api.confirm.quorum is 5, but there are only 3 vantage points (this instance and 2 mesh peers)']);
  });

  it('refuses a quorum that is not a whole number from 1, an unknown key, and a missing quorum', () => {
    expect(configProblems(MESH + 'confirm: { quorum: 0 }\n')).toEqual(['m.yaml:5: confirm.quorum must be a whole number from 1 to 100']);
    expect(configProblems(MESH + 'confirm: { quorum: 1.5 }\n')).toEqual(['m.yaml:5: confirm.quorum must be a whole number from 1 to 100']);
    expect(configProblems(MESH + 'confirm: { quorum: 2, votes: 3 }\n')).toEqual(['m.yaml:5: confirm.votes is not a known setting (known: quorum)']);
    expect(configProblems(MESH + 'confirm: {}\n')).toEqual(['m.yaml:5: confirm needs a quorum: how many vantage points, this instance included, must see a target down']);
    expect(configProblems(MESH + 'confirm: 2\n')).toEqual(['m.yaml:5: confirm must be a mapping like {quorum: 2}']);
  });
});
