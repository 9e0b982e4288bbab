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

  it('a table or a record is one write (a line each would be a system call each in a pipe), with the same text', () => {
    for (const tty of [false, true]) {
      const io = fakeIO({ tty, env: { NO_COLOR: '1' } });
      const writes: string[] = [];
      const write = io.stdout.write.bind(io.stdout);
      io.stdout.write = ((chunk: string, ...rest: never[]) => (writes.push(chunk), write(chunk, ...rest))) as typeof io.stdout.write;
      printTable(io, ['id', 'title'], [['1', 'first'], ['22', 'second']]);
      printFields(io, [['valid', 'yes'], ['item', 'font-pro']]);
      printTable(io, ['id'], []);
      expect(writes).toEqual(
        tty
          ? ['ID  TITLE\n1   first\n22  second\n', 'valid: yes\nitem:  font-pro\n', 'ID\n']
          : ['1\tfirst\n22\tsecond\n', 'valid\tyes\nitem\tfont-pro\n'],
      );
    }
  });
});
