// The README is the way in and docs/ the reference: every relative link between them must land
// on a file and, when it names one, on a heading that exists; and the README stays a short tour.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = join(import.meta.dirname, '../..');
const README_LIMIT = 15_000;

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return markdownUnder(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

// The documents a reader walks between; CONTRIBUTING.md is optional so the test does not
// depend on the order in which the files were written.
const documents = [join(root, 'README.md'), join(root, 'CONTRIBUTING.md'), ...markdownUnder(join(root, 'docs'))].filter((f) => existsSync(f));

/** Each line of the text, or null inside a fenced code block (its fences included). */
function outsideFences(text: string): (string | null)[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (open) {
      if (fence === null) fence = open[1]!;
      else if (line.trim().startsWith(fence)) fence = null;
      return null;
    }
    return fence === null ? line : null;
  });
}

/** The text outside fenced code blocks and inline code, where a `](` is prose, not a link. */
function prose(text: string): string[] {
  return outsideFences(text).map((line) => (line === null ? '' : line.replace(/`+[^`]*`+/g, '``')));
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of outsideFences(text)) {
    if (line === null) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link { from: string; line: number; target: string }

function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  prose(readFileSync(file, 'utf8')).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      links.push({ from: relative(root, file), line: i + 1, target });
    }
  });
  return links;
}

describe('README and docs/', () => {
  it(`the README stays a tour: under ${README_LIMIT} characters`, () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8').length).toBeLessThan(README_LIMIT);
  });

  it('the README links into docs/', () => {
    expect(relativeLinks(join(root, 'README.md')).some((l) => l.target.startsWith('docs/'))).toBe(true);
  });

  it('every relative link resolves to a file, and every anchor to a heading of it', () => {
    const broken: string[] = [];
    for (const file of documents) {
      for (const link of relativeLinks(file)) {
        const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
        const target = path === '' ? file : join(dirname(file), decodeURIComponent(path));
        const where = `${link.from}:${link.line}: ${link.target}`;
        if (!existsSync(target)) { broken.push(`${where} (no such file)`); continue; }
        if (anchor === undefined || anchor === '') continue;
        if (statSync(target).isDirectory() || !target.endsWith('.md')) { broken.push(`${where} (an anchor into a file that is not Markdown)`); continue; }
        if (!anchors(readFileSync(target, 'utf8')).has(decodeURIComponent(anchor))) broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the anchor rule matches GitHub on headings with code and punctuation', () => {
    const slugs = anchors('# SLA reports (`GET /api/report/{target}?from=&to=`, `mkt monitor report`)\n## Pages\n## Pages\n```\n# not a heading\n```\n');
    expect([...slugs]).toEqual(['sla-reports-get-apireporttargetfromto-mkt-monitor-report', 'pages', 'pages-1']);
  });
});
