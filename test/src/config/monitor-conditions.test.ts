// Issue 31, "Conditions on an HTTP answer": `conditions:` in monitor.yaml. Good conditions load
// parsed; a malformed one is a config error naming its file, line and what is wrong, so
// `mkt monitor check-config` reports it and `mkt serve monitor` refuses to start (exit 2).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { parseMonitorConfig } from '../../../src/config/monitor.js';
import { configProblems } from '../../helpers/monitor-config.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';

const dir = tempDir();
afterAll(() => dir.remove());

const yaml = (conditions: string[]): string => `targets:\n  api:\n    url: http://127.0.0.1:9/health\n    conditions:\n${conditions.map((c) => `      - ${JSON.stringify(c)}`).join('\n')}\n`;

describe('conditions in monitor.yaml', () => {
  it('are read parsed, in order', () => {
    const cfg = parseMonitorConfig(yaml(['[STATUS] == 200', '[body].status == pat(ok*)']), 'm.yaml');
    expect(cfg.targets[0]!.conditions).toEqual([
      { text: '[STATUS] == 200', placeholder: 'STATUS', path: [], op: '==', value: { kind: 'literal', text: '200', quoted: false, number: 200 } },
      { text: '[BODY].status == pat(ok*)', placeholder: 'BODY', path: ['status'], op: '==', value: { kind: 'pattern', glob: 'ok*' } },
    ]);
  });

  it('a malformed condition names the file, its line and what is wrong; every bad one is listed', () => {
    expect(configProblems(yaml(['[STATUS] == 200', '[FOO] == 1', '[BODY].a == any(x, y']))).toEqual([
      'm.yaml:6: targets.api.conditions.1 is not a condition: unknown placeholder [FOO] (known: [STATUS], [RESPONSE_TIME], [BODY], [CERTIFICATE_EXPIRATION])',
      'm.yaml:7: targets.api.conditions.2 is not a condition: unterminated any( (it must end with ")")',
    ]);
    expect(configProblems(yaml(['[STATUS]']))).toEqual(['m.yaml:5: targets.api.conditions.0 is not a condition: missing operator after [STATUS] (one of == != < <= > >=)']);
  });

  it('mkt monitor check-config prints the line and exits 2; mkt serve monitor refuses the file with exit 2', async () => {
    const bad = join(dir.path, 'monitor.yaml');
    writeFileSync(bad, `token: t0k\n${yaml(['[STATUS] == 200', '[BODY].status = ok'])}`);
    const problem = `${bad}:7: targets.api.conditions.1 is not a condition: unknown operator "=" (one of == != < <= > >=)`;
    const check = fakeIO();
    // Issue 31: check-config exits 2 on a malformed file, as serve does.
    expect(await run(['monitor', 'check-config', bad], check)).toBe(2);
    expect(check.err()).toContain(problem);
    const serve = fakeIO({ env: { MKT_LOG_LEVEL: 'silent' } });
    expect(await run(['serve', 'monitor', '--port', '0', '--data-dir', dir.path, '--config', bad], serve)).toBe(2);
    expect(serve.err()).toContain(problem);
    expect(serve.out()).not.toContain('listening on');
  });
});
