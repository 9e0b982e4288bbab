// Parse-level tests of `mkt notes` (gh's runF): each flag reaches its verb's options (LsOptions,
// SearchOptions, ...) under its name; -m collects paragraphs; [rev] defaults to HEAD; usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { logRun } from '../../../commands/notes/log.js';
import type { lsRun } from '../../../commands/notes/ls.js';
import type { rmRun } from '../../../commands/notes/rm.js';
import type { searchRun } from '../../../commands/notes/search.js';
import type { setRun } from '../../../commands/notes/set.js';
import type { showRun } from '../../../commands/notes/show.js';
import { leafPaths, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('notes');
const CLIENT = ['--repo', 'ana/widgets', '--namespace', 'reviews/security', '--server', 'http://h:7070', '--json'];
const client = { repo: 'ana/widgets', namespace: 'reviews/security', server: 'http://h:7070', json: true };

describe('mkt notes: parsing', () => {
  it('ls: --repo, --server, --json (no --namespace: ls lists them all)', async () => {
    await cli.verb<typeof lsRun>('notes ls', [], {});
    await cli.verb<typeof lsRun>('notes ls', ['--repo', 'ana/widgets', '--server', 'u', '--json'], { repo: 'ana/widgets', server: 'u', json: true });
    await cli.usage(['notes', 'ls', '--namespace', 'ci'], /unknown option '--namespace'/);
  });

  it('search: the query words, --commits-only, --limit and the client flags', async () => {
    await cli.verb<typeof searchRun>('notes search', ['flaky', 'test', 'or', 'timeout'], { query: ['flaky', 'test', 'or', 'timeout'] });
    await cli.verb<typeof searchRun>('notes search', ['"needs backport"', '--commits-only', '--limit', '20', ...CLIENT], {
      query: ['"needs backport"'],
      commitsOnly: true,
      limit: '20',
      ...client,
    });
    await cli.usage(['notes', 'search'], /missing required argument 'query'/);
  });

  it('show: [rev] defaults to HEAD; --attribution', async () => {
    await cli.verb<typeof showRun>('notes show', [], { rev: 'HEAD' });
    await cli.verb<typeof showRun>('notes show', ['v1.2.0', '--attribution', ...CLIENT], { rev: 'v1.2.0', attribution: true, ...client });
  });

  it('log: [rev] defaults to HEAD; --limit and the client flags', async () => {
    await cli.verb<typeof logRun>('notes log', [], { rev: 'HEAD' });
    await cli.verb<typeof logRun>('notes log', ['v1.2.0', '--limit', '5', ...CLIENT], { rev: 'v1.2.0', limit: '5', ...client });
    await cli.usage(['notes', 'log', 'HEAD', 'extra'], /too many arguments/);
    await cli.usage(['notes', 'log', '--limit'], /argument missing/);
  });

  it('set: -m/--message collects paragraphs; -F/--file; --commit-message', async () => {
    await cli.verb<typeof setRun>('notes set', ['-m', 'Tested-on: arm64', '--message', 'All green.'], { rev: 'HEAD', message: ['Tested-on: arm64', 'All green.'] });
    await cli.verb<typeof setRun>('notes set', ['3f2a9c1', '-F', '-', '--commit-message', 'ci run 7', ...CLIENT], { rev: '3f2a9c1', file: '-', commitMessage: 'ci run 7', ...client });
    await cli.verb<typeof setRun>('notes set', ['--file', 'note.txt'], { rev: 'HEAD', file: 'note.txt' });
    await cli.usage(['notes', 'set', 'HEAD', 'extra'], /too many arguments/);
  });

  it('rm: [rev] defaults to HEAD', async () => {
    await cli.verb<typeof rmRun>('notes rm', [], { rev: 'HEAD' });
    await cli.verb<typeof rmRun>('notes rm', ['HEAD~3', ...CLIENT], { rev: 'HEAD~3', ...client });
    await cli.usage(['notes', 'rm', '-m', 'x'], /unknown option '-m'/);
  });

  it('every verb of mkt notes has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('notes'));
  });
});
