// The local-clone side of `mkt notes` (issue 4 "Client"): OWNER/REPO from remote URLs of every
// form, and revisions (HEAD, annotated tags, short shas, full ids) resolved with the real git.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloneError, parseRepoArg, redactUrl, repoFromClone, repoFromRemoteUrl, resolveTarget } from '../../../src/client/git-clone.js';
import { tempDir } from '../../helpers/tmp.js';

describe('OWNER/REPO from a remote URL', () => {
  it.each([
    ['https://market.example.com/ana/widgets.git', 'ana/widgets'],
    ['https://market.example.com/ana/widgets', 'ana/widgets'],
    ['https://market.example.com/ana/widgets/', 'ana/widgets'],
    ['http://127.0.0.1:7070/ana/widgets.git', 'ana/widgets'],
    ['https://ana:s3cret@market.example.com/git/ana/widgets.git', 'ana/widgets'],
    ['ssh://git@market.example.com:2222/ana/widgets.git', 'ana/widgets'],
    ['git@market.example.com:ana/widgets.git', 'ana/widgets'],
    ['market.example.com:ana/my.widgets', 'ana/my.widgets'],
  ])('%s → %s', (url, want) => {
    const r = repoFromRemoteUrl(url);
    expect(r && `${r.owner}/${r.repo}`).toBe(want);
  });

  it.each(['/srv/git/widgets.git', '../widgets', 'file:///srv/git/ana/widgets.git', 'https://market.example.com/widgets.git', 'git@host:widgets.git'])('%s has no OWNER/REPO', (url) => {
    expect(repoFromRemoteUrl(url)).toBeUndefined();
  });

  it('--repo takes OWNER/REPO (a trailing .git dropped) and refuses anything else', () => {
    expect(parseRepoArg('ana/widgets.git')).toEqual({ owner: 'ana', repo: 'widgets' });
    for (const bad of ['widgets', 'ana/widgets/extra', 'ana/', '/widgets', 'ana/wid gets', 'ana/../x?']) expect(() => parseRepoArg(bad)).toThrow(CloneError);
  });

  it('a token in a remote URL never reaches a message', () => {
    expect(redactUrl('https://ana:s3cret@market.example.com/x')).toBe('https://market.example.com/x');
  });
});

describe('revisions resolved in a real clone', () => {
  const dir = tempDir('mkt-notes-clone-');
  const git = (...args: string[]): string =>
    execFileSync('git', args, { cwd: dir.path, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Ana', GIT_AUTHOR_EMAIL: 'ana@example.com', GIT_COMMITTER_NAME: 'Ana', GIT_COMMITTER_EMAIL: 'ana@example.com' } }).trim();
  let first = '';
  let head = '';
  beforeAll(() => {
    git('init', '-q', '-b', 'main');
    git('commit', '-q', '--allow-empty', '-m', 'first');
    first = git('rev-parse', 'HEAD');
    git('tag', '-a', '-m', 'release one', 'v1', first);
    writeFileSync(join(dir.path, 'README.md'), 'widgets\n');
    git('add', 'README.md');
    git('commit', '-q', '-m', 'second');
    head = git('rev-parse', 'HEAD');
  });
  afterAll(() => dir.remove());

  it('HEAD, HEAD~1, a short sha and an annotated tag (peeled to its commit) give full ids', async () => {
    expect(await resolveTarget(dir.path, 'HEAD')).toBe(head);
    expect(await resolveTarget(dir.path, 'HEAD~1')).toBe(first);
    expect(await resolveTarget(dir.path, head.slice(0, 7))).toBe(head);
    expect(await resolveTarget(dir.path, 'v1')).toBe(first);
  });

  it('a blob by path and a commit by message text resolve too', async () => {
    expect(await resolveTarget(dir.path, 'HEAD:README.md')).toBe(git('hash-object', 'README.md'));
    expect(await resolveTarget(dir.path, ':/first')).toBe(first);
  });

  it('full 40- and 64-hex ids pass through without a clone (lowercased)', async () => {
    const nowhere = '/nonexistent/mkt-notes';
    expect(await resolveTarget(nowhere, 'A'.repeat(40))).toBe('a'.repeat(40));
    expect(await resolveTarget(nowhere, 'b'.repeat(64))).toBe('b'.repeat(64));
    await expect(resolveTarget(nowhere, 'HEAD')).rejects.toThrow(/not inside a git clone/);
  });

  it('unknown revisions and option-like input are refused, not passed to git as options', async () => {
    await expect(resolveTarget(dir.path, 'no-such-branch')).rejects.toThrow(/unknown revision/);
    await expect(resolveTarget(dir.path, '--output=/tmp/x')).rejects.toThrow(/not a revision/);
  });

  it('OWNER/REPO from origin (or the only remote); a clone without one is a clear error', async () => {
    await expect(repoFromClone(dir.path)).rejects.toThrow(/no remote/);
    git('remote', 'add', 'upstream', 'git@market.example.com:bo/gadgets.git');
    expect(await repoFromClone(dir.path)).toEqual({ owner: 'bo', repo: 'gadgets' });
    git('remote', 'add', 'fork', 'https://market.example.com/cy/gadgets.git');
    await expect(repoFromClone(dir.path)).rejects.toThrow(/no `origin` remote/);
    git('remote', 'add', 'origin', 'https://ana:s3cret@market.example.com/ana/widgets.git');
    expect(await repoFromClone(dir.path)).toEqual({ owner: 'ana', repo: 'widgets' });
    git('remote', 'set-url', 'origin', 'https://ana:s3cret@market.example.com/widgets.git');
    const err = await repoFromClone(dir.path).catch((e: Error) => e);
    expect(String(err)).toMatch(/cannot tell OWNER\/REPO/);
    expect(String(err)).not.toContain('s3cret');
  });
});
