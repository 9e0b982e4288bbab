// Parse-level tests of `mkt notes` (gh's runF): each flag reaches its verb's options (LsOptions,
// SearchOptions, ...) under its name; -m collects paragraphs; [rev] defaults to HEAD; usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { exportRun } from '../../../commands/notes/export.js';
import type { logRun } from '../../../commands/notes/log.js';
import type { missingRun } from '../../../commands/notes/missing.js';
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
  });

  it('search (issue 36): no words lists every note the filters keep', async () => {
    await cli.verb<typeof searchRun>('notes search', [], { query: [] });
    await cli.verb<typeof searchRun>('notes search', ['--namespace', 'ci', '--all', '--format', 'ndjson'], { query: [], namespace: 'ci', all: true, format: 'ndjson' });
  });

  it('search (issue 36): --literal and --regex in place of the words', async () => {
    await cli.verb<typeof searchRun>('notes search', ['--literal', '<20261129.1234@example.org>'], { query: [], literal: '<20261129.1234@example.org>' });
    await cli.verb<typeof searchRun>('notes search', ['--regex', '^Code-Review[+-][12]'], { query: [], regex: '^Code-Review[+-][12]' });
    await cli.usage(['notes', 'search', '--literal', 'a', '--regex', 'b'], /option '--literal <text>' cannot be used with option '--regex <pattern>'/);
    await cli.usage(['notes', 'search', '--regex', 'b', '--literal', 'a'], /cannot be used with option/);
    await cli.usage(['notes', 'search', 'words', '--literal', 'a'], /give the query as words or as --literal, not both/);
    await cli.usage(['notes', 'search', '--regex', 'b', 'words'], /give the query as words or as --regex, not both/);
    await cli.usage(['notes', 'search', '--literal'], /argument missing/);
  });

  it('search (issue 36): --field collects KEY~TEXT and KEY=VALUE; a filter without a key or a separator is refused', async () => {
    await cli.verb<typeof searchRun>('notes search', ['--field', 'Reviewed-by~alice', '--field', 'closes-issues=42', '--field', 'Code-Review=+2', '--field', 'url~a=b~c'], {
      query: [],
      field: ['Reviewed-by~alice', 'closes-issues=42', 'Code-Review=+2', 'url~a=b~c'],
    });
    await cli.verb<typeof searchRun>('notes search', ['--field', 'Acked-by~'], { query: [], field: ['Acked-by~'] });
    await cli.usage(['notes', 'search', '--field', 'Reviewed-by'], /option '--field <KEY~TEXT\|KEY=VALUE>' argument 'Reviewed-by' is invalid\. give KEY~TEXT/);
    await cli.usage(['notes', 'search', '--field', '~alice'], /argument '~alice' is invalid/);
    await cli.usage(['notes', 'search', '--field', '=x'], /argument '=x' is invalid/);
  });

  it('search (issue 36): --author, --since, --until (RFC 3339 or a date)', async () => {
    await cli.verb<typeof searchRun>('notes search', ['--author', 'ana@example.com', '--since', '2026-11-01', '--until', '2026-11-29T13:00:00Z'], {
      query: [],
      author: 'ana@example.com',
      since: '2026-11-01',
      until: '2026-11-29T13:00:00Z',
    });
    await cli.verb<typeof searchRun>('notes search', ['--since', '2026-11-29T13:00:00.250+01:00'], { query: [], since: '2026-11-29T13:00:00.250+01:00' });
    await cli.usage(['notes', 'search', '--since', 'yesterday'], /option '--since <time>' argument 'yesterday' is invalid\. give an RFC 3339 time/);
    await cli.usage(['notes', 'search', '--until', '2026-13-45'], /'--until <time>' argument '2026-13-45' is invalid/);
    await cli.usage(['notes', 'search', '--since', '2026-11-29T13:00:00'], /is invalid/);
  });

  it('search (issue 36): --range, --owner (not with --repo), --all, --cursor', async () => {
    await cli.verb<typeof searchRun>('notes search', ['x', '--range', 'v1.0..HEAD', '--all'], { query: ['x'], range: 'v1.0..HEAD', all: true });
    await cli.verb<typeof searchRun>('notes search', ['--owner', 'ana', '--literal', 'https://lore.kernel.org/'], { query: [], owner: 'ana', literal: 'https://lore.kernel.org/' });
    await cli.verb<typeof searchRun>('notes search', ['x', '--cursor', 'eyJ2IjoxfQ', '--json'], { query: ['x'], cursor: 'eyJ2IjoxfQ', json: true });
    await cli.usage(['notes', 'search', 'x', '--owner', 'ana', '--repo', 'ana/widgets'], /option '--owner <owner>' cannot be used with option '--repo <owner\/repo>'/);
    await cli.usage(['notes', 'search', 'x', '--range', '--all'], /argument '--all' is invalid\. give a revision range/);
    await cli.usage(['notes', 'search', 'x', '--cursor', 'c', '--range', 'a..b'], /option '--cursor <cursor>' cannot be used with option '--range <A..B>'/);
  });

  it('search (issue 36): --format ndjson|json|tsv, --count-by namespace|note_author|field:KEY', async () => {
    for (const format of ['ndjson', 'json', 'tsv'] as const) await cli.verb<typeof searchRun>('notes search', ['x', '--format', format], { query: ['x'], format });
    for (const countBy of ['namespace', 'note_author', 'field:Code-Review']) {
      await cli.verb<typeof searchRun>('notes search', ['--namespace', 'review', '--count-by', countBy], { query: [], namespace: 'review', countBy });
    }
    await cli.usage(['notes', 'search', 'x', '--format', 'csv'], /argument 'csv' is invalid\. Allowed choices are ndjson, json, tsv/);
    await cli.usage(['notes', 'search', 'x', '--format', 'json', '--json'], /option '--format <format>' cannot be used with option '--json'/);
    await cli.usage(['notes', 'search', '--count-by', 'field:'], /argument 'field:' is invalid\. give namespace, note_author or field:KEY/);
    await cli.usage(['notes', 'search', '--count-by', 'target'], /is invalid/);
    await cli.usage(['notes', 'search', '--count-by', 'namespace', '--cursor', 'c'], /cannot be used with option '--count-by <group>'/);
  });

  it('missing (issue 36): <range>, --namespace and the client flags', async () => {
    await cli.verb<typeof missingRun>('notes missing', ['v1.0..HEAD'], { range: 'v1.0..HEAD' });
    await cli.verb<typeof missingRun>('notes missing', ['origin/main~50..origin/main', ...CLIENT], { range: 'origin/main~50..origin/main', ...client });
    await cli.usage(['notes', 'missing'], /missing required argument 'range'/);
    await cli.usage(['notes', 'missing', 'a..b', 'c..d'], /too many arguments/);
    await cli.usage(['notes', 'missing', '--', '--output=x'], /value '--output=x' is invalid for argument 'range'\. give a revision range/);
  });

  it('export (issue 36): --format jsonl|csv, --namespace, --repo, --server; no --json', async () => {
    await cli.verb<typeof exportRun>('notes export', [], {});
    await cli.verb<typeof exportRun>('notes export', ['--namespace', 'ci', '--format', 'csv', '--repo', 'ana/widgets', '--server', 'u'], { namespace: 'ci', format: 'csv', repo: 'ana/widgets', server: 'u' });
    await cli.verb<typeof exportRun>('notes export', ['--format', 'jsonl'], { format: 'jsonl' });
    await cli.usage(['notes', 'export', '--format', 'ndjson'], /Allowed choices are jsonl, csv/);
    await cli.usage(['notes', 'export', '--json'], /unknown option '--json'/);
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
