// Lint for the shape of the module graph: every import circle, and every layer break (src/
// importing daemon/ or commands/). Usage: node scripts/check-imports.mjs [root]; exit 1 lists both.
//
// Type-only imports (`import type`, `export type`, inline `type` specifiers, `typeof import()`)
// count for circles too: they vanish at runtime, but a circle of types still ties two modules
// so that neither can be read, moved or split without the other, and the house rule is "no
// import circle anywhere". They are marked `(type)` in the listing so the fix can be a small
// one (moving a type to the leaf that owns it). Layer breaks count every kind of import, lazy
// `import('...')` included: src/ is what both faces share and must load without either.
//
// Imports are read with TypeScript's own parser (already a dev dependency), so an import inside
// a comment or a string is never mistaken for a real one. An `import(name)` whose name is computed
// (src/store/sqlite-worker.ts loads its driver package so) cannot be followed and is skipped.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Folders scanned under the root; the first three are the program, the last two its tooling. */
const SCANNED = ['src', 'daemon', 'commands', 'bin', 'scripts'];
const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;
/** src/ is shared by both faces, so it may import neither. */
const LAYERS = [{ from: 'src/', forbidden: ['daemon/', 'commands/'] }];

function listFiles(root) {
  const out = [];
  const walk = (dir) => {
    let names;
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const path = join(dir, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(path);
    }
  };
  for (const top of SCANNED) walk(join(root, top));
  return out.sort();
}

/** Every module specifier the file names, with whether that use is for types only. */
function importsOf(path) {
  const text = readFileSync(path, 'utf8');
  const kind = path.endsWith('x') ? ts.ScriptKind.TSX : path.endsWith('.ts') || path.endsWith('.mts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const found = [];
  const literal = (node) => node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const spec = literal(node.moduleSpecifier);
      const clause = node.importClause;
      let typeOnly = false;
      if (clause) {
        const named = clause.namedBindings;
        typeOnly = clause.isTypeOnly || (!clause.name && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly));
      }
      if (spec) found.push({ spec, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const spec = literal(node.moduleSpecifier);
      const clause = node.exportClause;
      const typeOnly = node.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly));
      if (spec) found.push({ spec, typeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const spec = literal(node.moduleReference.expression);
      if (spec) found.push({ spec, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const spec = literal(node.arguments[0]);
      if (spec) found.push({ spec, typeOnly: false });
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      const spec = ts.isLiteralTypeNode(arg) ? literal(arg.literal) : undefined;
      if (spec) found.push({ spec, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Resolves a relative specifier the way NodeNext + tsx do: `.js` names the `.ts` source. */
function resolveSpec(from, spec) {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(dirname(from), spec);
  const stems = [base];
  const m = /\.(js|jsx|mjs)$/.exec(base);
  if (m) stems.unshift(base.slice(0, -m[0].length));
  const candidates = [];
  for (const stem of stems) candidates.push(`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`);
  candidates.push(base);
  for (const dir of stems) candidates.push(join(dir, 'index.ts'), join(dir, 'index.tsx'), join(dir, 'index.js'));
  return candidates.find(isFile);
}

/** Tarjan's strongly connected components, iterative so deep graphs cannot overflow the stack. */
function components(nodes, edges) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      const succ = [...(edges.get(v)?.keys() ?? [])];
      if (i < succ.length) {
        frame[1]++;
        const w = succ[i];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) {
          low.set(v, Math.min(low.get(v), index.get(w)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        const comp = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          comp.push(w);
        } while (w !== v);
        out.push(comp.sort());
      }
    }
  }
  return out;
}

/** The shortest circle through `start` that stays inside its component (breadth first). */
function shortestCircle(start, members, edges) {
  const prev = new Map();
  const queue = [start];
  const seen = new Set([start]);
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of [...(edges.get(v)?.keys() ?? [])].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at = v; at !== start; at = prev.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (seen.has(w)) continue;
      seen.add(w);
      prev.set(w, v);
      queue.push(w);
    }
  }
  return [start, start];
}

/**
 * Reads the tree under `root` and returns its circles (each a list of lines, one circle per
 * line, until every module of the component appears in one) and its layer breaks.
 */
export function checkImports(root) {
  root = resolve(root);
  const rel = (p) => relative(root, p).split(sep).join('/');
  const files = listFiles(root);
  const known = new Set(files);
  /** edges: file -> (target -> typeOnly), typeOnly only when every use of the target is. */
  const edges = new Map();
  /** Every resolved import, inside the scanned tree or not (a layer break may point outside). */
  const all = new Map();
  for (const file of files) {
    const out = new Map();
    all.set(file, out);
    for (const { spec, typeOnly } of importsOf(file)) {
      const target = resolveSpec(file, spec);
      if (target) out.set(target, (out.get(target) ?? true) && typeOnly);
    }
    edges.set(file, new Map([...out].filter(([target]) => known.has(target))));
  }
  const breaks = [];
  for (const [file, out] of all) {
    const from = rel(file);
    for (const [target, typeOnly] of out) {
      const to = rel(target);
      for (const layer of LAYERS) {
        if (from.startsWith(layer.from) && layer.forbidden.some((f) => to.startsWith(f))) {
          breaks.push(`${from} imports ${to}${typeOnly ? ' (type)' : ''}`);
        }
      }
    }
  }
  const circles = [];
  for (const comp of components(files, edges)) {
    const self = comp.length === 1 && edges.get(comp[0]).has(comp[0]);
    if (comp.length < 2 && !self) continue;
    const members = new Set(comp);
    const covered = new Set();
    const lines = [];
    for (const start of comp) {
      if (covered.has(start)) continue;
      const path = shortestCircle(start, members, edges);
      path.forEach((p) => covered.add(p));
      let line = rel(path[0]);
      for (let i = 1; i < path.length; i++) {
        const typeOnly = edges.get(path[i - 1]).get(path[i]);
        line += ` -> ${rel(path[i])}${typeOnly ? ' (type)' : ''}`;
      }
      lines.push(line);
    }
    circles.push(lines);
  }
  return { files: files.length, circles, breaks: breaks.sort() };
}

function main() {
  const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..');
  const { files, circles, breaks } = checkImports(root);
  if (circles.length === 0 && breaks.length === 0) {
    console.log(`check-imports: ${files} modules, no import circle, no layer break`);
    return;
  }
  for (const lines of circles) {
    console.error(`import circle (${lines.length === 1 ? 'one path' : `${lines.length} paths`}):`);
    for (const line of lines) console.error(`  ${line}`);
  }
  for (const line of breaks) console.error(`layer break: ${line}`);
  console.error(`check-imports: ${circles.length} import circle(s), ${breaks.length} layer break(s) in ${files} modules`);
  process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
