// One public repository holding one commit with a note, for the get_note rows on a small repository
// (the guard's, bench/floor.ts, and bench/_perf-row.ts note): what an anonymous reader of a public
// repository's note asks for, without the 100,000 notes bench/notes.ts builds. Accounts first, while
// no server runs (`noteOwner`), then the push and the note through a running marketplace (`seedNote`).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { AccountsAdmin } from '../daemon/services/marketplace/accounts/admin.js';

/** The owner of the repository, its push token and the repository's name. */
export interface NoteOwner {
  owner: string;
  repo: string;
  token: string;
}

/** Makes user `owner`, a push token and the public repository `owner/app` in the data directory. */
export async function noteOwner(dir: string, owner: string): Promise<NoteOwner> {
  const admin = await AccountsAdmin.open({ dataDir: dir });
  try {
    await admin.addUser({ name: owner, email: `${owner}@example.com` });
    const token = (await admin.createToken(owner, 'push')).token;
    await admin.createRepo(`${owner}/app`, { private: false, objectFormat: 'sha1' });
    return { owner, repo: 'app', token };
  } finally {
    await admin.close();
  }
}

/** Pushes one commit to the repository through the marketplace at `url` and writes its note; the note's path. */
export async function seedNote(dir: string, url: string, o: NoteOwner): Promise<string> {
  const work = join(dir, `note-work-${o.owner}`);
  const git = (args: string[]) => execFileSync('git', ['-C', work, '-c', `user.name=${o.owner}`, '-c', `user.email=${o.owner}@example.com`, ...args], { encoding: 'utf8' }).trim();
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  git(['commit', '-q', '--allow-empty', '-m', 'one']);
  const commit = git(['rev-parse', 'HEAD']);
  const remote = new URL(`${url}/${o.owner}/${o.repo}.git`);
  remote.username = 'x';
  remote.password = o.token;
  git(['push', '-q', remote.toString(), 'main']);
  const path = `/api/git/${o.owner}/${o.repo}/notes/${commit}`;
  const put = await fetch(`${url}${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${o.token}` },
    body: JSON.stringify({ content: `Reviewed-by: ${o.owner} <${o.owner}@example.com>\nci=passed\n` }),
  });
  if (put.status !== 200) throw new Error(`the note was not written: ${put.status} ${await put.text()}`);
  return path;
}
