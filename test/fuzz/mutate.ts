// Turns schema-valid request models into the fuzz suite's HTTP requests: valid ones and their
// mutations (a field removed, a wrong type, hostile strings, deep JSON, bad bodies and content
// types, hostile path and query, wrong methods, unknown routes) with varied credentials.
import fc from 'fast-check';
import { anyJsonValue, badAuthorization, badContentType, badCookie, badUtf8, deepJsonText, hostileQuery, hostileSegment, hostileString, jsonType, malformedJson } from './hostile.js';
import { encode, encodeModel, validModelArb, type Hints, type OpenApiDoc, type Operation, type RequestModel } from './openapi-requests.js';

/** One HTTP request as sent, with what it was generated as (for the summary and the replay). */
export interface FuzzRequest {
  /** The operationId it targets, or `(unknown route)`. */
  op: string;
  /** Which mutation: `valid`, `missing-required`, `wrong-type`, ... */
  kind: string;
  /** Which credentials: `valid`, `none`, `bad-authorization`, ... */
  auth: string;
  method: string;
  /** Path and query, already encoded (possibly deliberately malformed). */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** A set of headers that authenticates someone; `label` names it in the summary (`valid`, `read-token`, ...). */
export interface Credential {
  label: string;
  headers: Record<string, string>;
}

export interface FuzzTarget {
  doc: OpenApiDoc;
  ops: Operation[];
  hints: Hints;
  /** Vetoes generated path values: ids of the records written before the run never come up. */
  pathOk?: (name: string, value: string) => boolean;
  /**
   * Header sets that authenticate, e.g. `{ authorization: 'Bearer …' }` or a session cookie; a
   * function gives each operation its own (a sync token for sync, a push token for notes).
   */
  credentials: Credential[] | ((op: Operation | undefined) => Credential[]);
}

export const UNKNOWN_ROUTE = '(unknown route)';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'PURGE', 'FOO'];

type Path = (string | number)[];

/** Paths to every node of a JSON value (root first), capped so huge values stay cheap. */
function nodePaths(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  if (out.length >= 200) return out;
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => nodePaths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) nodePaths(x, [...at, k], out);
  return out;
}

/** A copy of `root` with the node at `path` replaced (or removed, with `remove`). */
function setAt(root: unknown, path: Path, value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  const copy: unknown = structuredClone(root);
  let node = copy as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (remove && Array.isArray(node)) node.splice(last as number, 1);
  else if (remove) delete node[last];
  else node[last] = value;
  return copy;
}

interface Rendered {
  method?: string;
  path?: string;
  query?: string;
  body?: string | Uint8Array;
  /** null: send no content type. */
  contentType?: string | null;
}

function render(op: Operation, m: RequestModel, kind: string, r: Rendered = {}): Omit<FuzzRequest, 'auth'> {
  const enc = encodeModel(op, m);
  const query = r.query ?? enc.query;
  const headers: Record<string, string> = {};
  let body = r.body;
  if (body === undefined && m.body !== undefined) body = JSON.stringify(m.body);
  const ct = r.contentType === undefined ? (body !== undefined ? (op.body?.contentType ?? 'application/json') : null) : r.contentType;
  if (ct !== null && body !== undefined) headers['content-type'] = ct;
  return { op: op.id, kind, method: r.method ?? op.method, path: (r.path ?? enc.path) + (query ? `?${query}` : ''), headers, body };
}

const wrongQueryValue = fc.constantFrom('abc', '-1', '1.5', '', 'true', 'null', '[]', '{}', '1e400', '-0', ' 1', '99999999999999999999999', '0x1F', 'NaN');

/** All the request shapes of one operation. */
function operationArb(t: FuzzTarget, op: Operation): fc.Arbitrary<Omit<FuzzRequest, 'auth'>> {
  const valid = validModelArb(t.doc, op, t.hints, t.pathOk);
  const pick = fc.nat({ max: 1_000_000 });
  const pathNames = op.params.filter((p) => p.in === 'path').map((p) => p.name);
  const definedMethods = new Set(Object.keys(t.doc.paths[op.path] ?? {}).map((m) => m.toUpperCase()));
  const otherMethods = ALL_METHODS.filter((m) => !definedMethods.has(m) && !(m === 'HEAD' && definedMethods.has('GET')));

  const missing = fc.tuple(valid, pick).map(([m, i]) => {
    const keys: ({ query: string } | { body: Path })[] = [
      ...op.params.filter((p) => p.in === 'query' && p.required).map((p) => ({ query: p.name })),
      ...nodePaths(m.body).filter((p) => p.length > 0 && typeof p[p.length - 1] === 'string').map((p) => ({ body: p })),
    ];
    if (keys.length === 0) return render(op, { ...m, body: undefined }, 'missing-required');
    const k = keys[i % keys.length]!;
    if ('query' in k) return render(op, { ...m, query: m.query.filter(([q]) => q !== k.query) }, 'missing-required');
    return render(op, { ...m, body: setAt(m.body, k.body, undefined, true) }, 'missing-required');
  });

  const wrongType = fc.tuple(valid, pick, anyJsonValue, wrongQueryValue).map(([m, i, v, qv]) => {
    const paths = m.body === undefined ? [] : nodePaths(m.body);
    const slots = paths.length + m.query.length + pathNames.length;
    if (slots === 0) return render(op, { ...m, body: v }, 'wrong-type');
    const s = i % slots;
    if (s < paths.length) {
      const at = paths[s]!;
      const old = at.reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], m.body);
      return render(op, { ...m, body: setAt(m.body, at, jsonType(v) === jsonType(old) ? [v] : v) }, 'wrong-type');
    }
    if (s < paths.length + m.query.length) {
      const q = s - paths.length;
      return render(op, { ...m, query: m.query.map((e, j) => (j === q ? [e[0], qv] : e)) }, 'wrong-type');
    }
    const name = pathNames[s - paths.length - m.query.length]!;
    return render(op, { ...m, pathValues: { ...m.pathValues, [name]: qv === '' ? '-1' : qv } }, 'wrong-type');
  });

  const hostile = fc.tuple(valid, pick, hostileString).map(([m, i, h]) => {
    const paths = m.body === undefined ? [] : nodePaths(m.body).filter((p) => p.length > 0);
    const queryNames = op.params.filter((p) => p.in === 'query').map((p) => p.name);
    const slots = paths.length + queryNames.length + pathNames.length;
    if (slots === 0) return render(op, m, 'hostile-string', { query: `x=${encode(h)}` });
    const s = i % slots;
    if (s < paths.length) return render(op, { ...m, body: setAt(m.body, paths[s]!, h) }, 'hostile-string');
    if (s < paths.length + queryNames.length) {
      const name = queryNames[s - paths.length]!;
      return render(op, { ...m, query: [...m.query.filter(([q]) => q !== name), [name, h]] }, 'hostile-string');
    }
    // an empty path segment routes elsewhere; that is the unknown-route case, not this one
    return render(op, { ...m, pathValues: { ...m.pathValues, [pathNames[s - paths.length - queryNames.length]!]: h || '\u0000' } }, 'hostile-string');
  });

  const deep = fc.tuple(valid, pick, deepJsonText).map(([m, i, text]) => {
    const paths = m.body === undefined ? [[]] : nodePaths(m.body);
    const at = paths[i % paths.length]!;
    const shell = JSON.stringify(setAt(m.body ?? null, at, '@@deep-marker@@'));
    return render(op, m, 'deep-json', { body: shell.replace('"@@deep-marker@@"', () => text), contentType: 'application/json', method: op.body ? op.method : 'POST' });
  });

  const contentType = fc.tuple(valid, badContentType, fc.boolean()).map(([m, ct, formBody]) =>
    render(op, m, 'bad-content-type', { body: formBody ? 'a=1&b=%00' : JSON.stringify(m.body ?? {}), contentType: ct ?? null }),
  );
  const malformed = fc.tuple(valid, malformedJson).map(([m, text]) => render(op, m, 'malformed-json', { body: text, contentType: 'application/json' }));
  const bytes = fc.tuple(valid, badUtf8).map(([m, b]) => render(op, m, 'bad-utf8', { body: b, contentType: 'application/json' }));
  const extra = fc.tuple(valid, fc.constantFrom('__proto__', 'constructor', 'prototype', 'unknown_field', '', '\u0000')).map(([m, key]) => {
    const base = m.body && typeof m.body === 'object' && !Array.isArray(m.body) ? JSON.stringify(m.body).slice(1, -1) : '';
    const field = `${JSON.stringify(key)}:{"polluted":true,"isAdmin":true}`;
    return render(op, m, 'extra-property', { body: `{${base ? base + ',' : ''}${field}}`, contentType: 'application/json' });
  });
  const pathArb = fc.tuple(valid, pick, hostileSegment).map(([m, i, seg]) => {
    const enc = encodeModel(op, m);
    if (pathNames.length === 0) return render(op, m, 'hostile-path', { path: `${enc.path}/${seg}` });
    const name = pathNames[i % pathNames.length]!;
    const segs = Object.fromEntries(Object.entries(m.pathValues).map(([k, v]) => [k, k === name ? seg : encode(v)]));
    return render(op, m, 'hostile-path', { path: op.path.replace(/\{([^}]+)\}/g, (_, n: string) => segs[n] ?? 'x') });
  });
  const queryArb = fc.tuple(valid, hostileQuery, fc.boolean()).map(([m, q, append]) => {
    const enc = encodeModel(op, m);
    return render(op, m, 'hostile-query', { query: append && enc.query ? `${enc.query}&${q}` : q });
  });
  const method = fc.tuple(valid, fc.constantFrom(...(otherMethods.length ? otherMethods : ['FOO']))).map(([m, verb]) => render(op, m, 'wrong-method', { method: verb }));

  return fc.oneof(
    { weight: 12, arbitrary: valid.map((m) => render(op, m, 'valid')) },
    { weight: 2, arbitrary: missing },
    { weight: 2, arbitrary: wrongType },
    { weight: 3, arbitrary: hostile },
    { weight: 2, arbitrary: deep },
    { weight: 1, arbitrary: contentType },
    { weight: 1, arbitrary: malformed },
    { weight: 1, arbitrary: bytes },
    { weight: 1, arbitrary: extra },
    { weight: 2, arbitrary: pathArb },
    { weight: 2, arbitrary: queryArb },
    { weight: 1, arbitrary: method },
  );
}

/** Requests to routes that do not exist, with any method. */
function unknownRouteArb(t: FuzzTarget): fc.Arbitrary<Omit<FuzzRequest, 'auth'>> {
  const known = Object.keys(t.doc.paths).map((p) => p.replace(/\{[^}]+\}/g, 'x'));
  const paths = fc.oneof(
    fc.constantFrom('/', '/x', '/api', '/api/', '/api/v1', '/api/v2/x', '//', '/./', '/../', '/%2e%2e/%2e%2e/etc/passwd', '/.git/config', '/.env', '/favicon.ico', '/admin', '/openapi.json', '/openapi.json?x=%ZZ', '/openapi.json/x', '/openapi.json%00', '/index.php?a=1', '/%ZZ', '/%00', '/' + 'a'.repeat(9000), '/' + 'a/'.repeat(3000)),
    fc.constantFrom(...known).map((p) => p + '/extra'),
    fc.constantFrom(...known).map((p) => '/' + p.slice(1).toUpperCase()),
    fc.constantFrom(...known).map((p) => p.replace(/\/[^/]*$/, '/..%2F..%2Fx')),
    hostileSegment.map((s) => `/${s}`),
  );
  return fc.tuple(paths, fc.constantFrom(...ALL_METHODS), fc.option(fc.constantFrom('{}', '{"a":1}', '['), { nil: undefined })).map(([path, method, body]): Omit<FuzzRequest, 'auth'> => ({
    op: UNKNOWN_ROUTE,
    kind: 'unknown-route',
    method,
    path,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body,
  }));
}

/** Credentials to send: valid ones most of the time, else none, wrong or malformed. */
function authArb(t: FuzzTarget, op: Operation | undefined): fc.Arbitrary<{ auth: string; headers: Record<string, string> }> {
  const sets = typeof t.credentials === 'function' ? t.credentials(op) : t.credentials;
  const valid = sets.length ? fc.constantFrom(...sets) : fc.constant({ label: 'valid', headers: {} });
  return fc.oneof(
    { weight: 6, arbitrary: valid.map((c) => ({ auth: c.label, headers: c.headers })) },
    { weight: 2, arbitrary: fc.constant({ auth: 'none', headers: {} }) },
    { weight: 1, arbitrary: badAuthorization.map((a) => ({ auth: 'bad-authorization', headers: { authorization: a } })) },
    { weight: 1, arbitrary: badCookie.map((c) => ({ auth: 'bad-cookie', headers: { cookie: c } })) },
    { weight: 1, arbitrary: fc.tuple(valid, badCookie).map(([v, c]) => ({ auth: `${v.label}+bad-cookie`, headers: { ...v.headers, cookie: c } })) },
  );
}

/** The request arbitrary for one operation (or, with `op` undefined, for unknown routes). */
export function requestArb(t: FuzzTarget, op: Operation | undefined): fc.Arbitrary<FuzzRequest> {
  const shape = op ? operationArb(t, op) : unknownRouteArb(t);
  return fc.tuple(shape, authArb(t, op)).map(([r, a]) => ({ ...r, auth: a.auth, headers: { ...a.headers, ...r.headers } }));
}
