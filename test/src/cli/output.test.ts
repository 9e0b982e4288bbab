// Human output never passes a server's control characters to the terminal; --json stays exact.
import { describe, expect, it } from 'vitest';
import { cellText, printFields, printJson, printTable } from '../../../src/cli/output.js';
import { fakeIO } from '../../helpers/fake-io.js';

const hostile = 'a\u001b[2J\u001b]0;pwned\u0007b\u0000c\u009bd';

describe('human output', () => {
  it('escapes control characters and turns line breaks into spaces', () => {
    expect(cellText(hostile)).toBe('a\\x1b[2J\\x1b]0;pwned\\x07b\\x00c\\x9bd');
    expect(cellText('one\r\ntwo\tthree')).toBe('one two three');
    expect(cellText('ünïcode ✓')).toBe('ünïcode ✓');
  });

  it('tables (TTY and pipe) and field views carry no raw escape', () => {
    for (const tty of [true, false]) {
      const io = fakeIO({ tty, env: { NO_COLOR: '1' } });
      printTable(io, ['name'], [[hostile]]);
      printFields(io, [['name', hostile]]);
      // eslint-disable-next-line no-control-regex -- control characters are what this looks for
      expect(io.out()).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
  });

  it('--json keeps the value exact', () => {
    const io = fakeIO();
    printJson(io, { name: hostile });
    expect(JSON.parse(io.out())).toEqual({ name: hostile });
  });
});
