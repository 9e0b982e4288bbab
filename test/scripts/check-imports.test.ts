// scripts/check-imports.mjs, the lint for issue 29's "src/ imports nothing from daemon/ or
// commands/; no import circle anywhere", run on small trees written for each case.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const script = join(import.meta.dirname, '../../scripts/check-imports.mjs');
const made: string[] = [];

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Writes `files` (path relative to the root -> text) into a new directory and returns it. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'mkt-imports-'));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(root: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('check-imports', () => {
  it('accepts a clean tree with a one-line summary (exit 0)', () => {
    const root = tree({
      'src/util/time.ts': `export const now = (): number => Date.now();\n`,
      'src/store/x.ts': `import { now } from '../util/time.js';\nexport const y = now;\n`,
      'daemon/server.ts': `import { y } from '../src/store/x.js';\nexport const z = y;\n`,
      'commands/notes/index.ts': `import type { z } from '../../daemon/server.js';\nexport const run = async () => import('./list.js');\n`,
      'commands/notes/list.ts': `export const list = 1;\n`,
      // An import named only inside a comment or a string is not an import.
      'src/cli/help.ts': `// import '../../commands/notes/index.js'\nexport const text = "import('../../daemon/server.js')";\n`,
    });
    const r = check(root);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toMatch(/6 modules, no import circle, no layer break/);
  });

  it('reports a runtime circle, a type-only circle, a self-import and src/ layer breaks (exit 1)', () => {
    const root = tree({
      'src/a.ts': `import { b } from './b.js';\nexport const a = () => b;\n`,
      'src/b.ts': `export { a as b } from './a.js';\n`,
      'src/types.ts': `import type { T2 } from './types2.js';\nexport type T1 = { t: T2 };\n`,
      'src/types2.ts': `import { type T1 } from './types.js';\nexport type T2 = T1[];\n`,
      'src/self.ts': `import * as me from './self.js';\nexport const s = me;\n`,
      'src/dir/index.ts': `export const d = 1;\n`,
      'src/uses-dir.ts': `import { d } from './dir/index.js';\nimport('./dir/index.js');\nexport const u = d;\n`,
      'src/cli/factory.ts': `import { open } from '../../daemon/stores.js';\nexport const f = open;\n`,
      'src/cli/lazy.ts': `export const l = async () => (await import('../../commands/admin/index.js')).x;\n`,
      'daemon/stores.ts': `export const open = 1;\n`,
      'commands/admin/index.ts': `export const x = 1;\n`,
    });
    const r = check(root);
    expect(r.status).toBe(1);
    const lines = r.stderr.split('\n').map((l) => l.trim());
    expect(lines).toContain('src/a.ts -> src/b.ts -> src/a.ts');
    expect(lines).toContain('src/types.ts -> src/types2.ts (type) -> src/types.ts (type)');
    expect(lines).toContain('src/self.ts -> src/self.ts');
    expect(lines).toContain('layer break: src/cli/factory.ts imports daemon/stores.ts');
    expect(lines).toContain('layer break: src/cli/lazy.ts imports commands/admin/index.ts');
    expect(r.stderr).not.toMatch(/uses-dir|dir\/index/);
    expect(r.stderr).toMatch(/3 import circle\(s\), 2 layer break\(s\)/);
  });

  it('follows .tsx sources and directory imports into a circle', () => {
    const root = tree({
      'commands/view/index.ts': `import { App } from './app.js';\nexport const v = App;\n`,
      'commands/view/app.tsx': `import { v } from './index.js';\nexport const App = () => v;\n`,
      'commands/other.ts': `import { v } from './view/index.js';\nexport const o = v;\n`,
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('commands/view/app.tsx -> commands/view/index.ts -> commands/view/app.tsx');
    expect(r.stderr).not.toContain('commands/other.ts');
  });
});
