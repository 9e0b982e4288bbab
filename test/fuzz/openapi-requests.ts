// Request generator for the fuzz suite: reads a service's own OpenAPI 3.1 document and builds
// fast-check arbitraries of valid requests (from the parameter and body schemas) and of values.
import fc from 'fast-check';

/** The subset of JSON Schema that the services' TypeBox schemas use. */
export type Schema = Record<string, unknown>;

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  id: string;
  method: string;
  /** The templated path, e.g. `/tickets/{id}`. */
  path: string;
  params: Param[];
  body?: { schema: Schema; required: boolean; contentType: string };
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, { operationId?: string; parameters?: Param[]; requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> } }>>;
  components?: Record<string, Record<string, unknown>>;
}

/** Plausible values for parameters and properties of a name, so valid requests reach the handlers. */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** Follows a local `$ref` (`#/components/...`) to its schema. */
export function resolve(doc: OpenApiDoc, schema: Schema): Schema {
  let s = schema;
  for (let hops = 0; typeof s.$ref === 'string' && hops < 32; hops++) {
    const ref = s.$ref as string;
    if (!ref.startsWith('#/')) throw new Error(`only local $ref is supported: ${ref}`);
    let node: unknown = doc;
    for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (!node || typeof node !== 'object') throw new Error(`unresolved $ref: ${ref}`);
    s = node as Schema;
  }
  return s;
}

/** Every operation of the document, with an id (operationId or `METHOD path`). */
export function operationsOf(doc: OpenApiDoc): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const params = (op.parameters ?? []).map((p) => ({ ...p, schema: resolve(doc, p.schema ?? {}) }));
      const content = op.requestBody?.content ?? {};
      const contentType = Object.keys(content)[0];
      const body = contentType ? { schema: resolve(doc, content[contentType]!.schema ?? {}), required: op.requestBody?.required ?? false, contentType } : undefined;
      ops.push({ id: op.operationId ?? `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, params, body });
    }
  }
  return ops;
}

const MAX_DEPTH = 6;

/** An arbitrary of values that the schema accepts (best effort: formats and patterns included). */
export function valueArb(doc: OpenApiDoc, raw: Schema, hints: Hints, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const fromSchema = schemaArb(doc, resolve(doc, raw), hints, depth);
  const hint = name === undefined ? undefined : hints[name];
  return hint ? fc.oneof({ weight: 4, arbitrary: hint }, { weight: 1, arbitrary: fromSchema }) : fromSchema;
}

function num(s: Schema, key: string): number | undefined {
  return typeof s[key] === 'number' ? (s[key] as number) : undefined;
}

function schemaArb(doc: OpenApiDoc, s: Schema, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) return fc.oneof(...(s[key] as Schema[]).map((sub) => valueArb(doc, sub, hints, undefined, depth)));
  }
  if (Array.isArray(s.allOf)) return valueArb(doc, Object.assign({}, ...(s.allOf as Schema[]).map((x) => resolve(doc, x))) as Schema, hints, undefined, depth);
  if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).map((t) => schemaArb(doc, { ...s, type: t }, hints, depth)));
  switch (s.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = num(s, 'minimum') ?? (num(s, 'exclusiveMinimum') ?? -1_000_001) + 1;
      const max = num(s, 'maximum') ?? (num(s, 'exclusiveMaximum') ?? Math.max(min, 0) + 1_000_001) - 1;
      // mostly small values near the minimum (cursors, counts), sometimes anywhere in range
      return fc.oneof({ weight: 3, arbitrary: fc.integer({ min, max: Math.min(max, min + 10) }) }, { weight: 1, arbitrary: fc.integer({ min, max }) });
    }
    case 'number': {
      const min = num(s, 'minimum') ?? -1e6;
      const max = num(s, 'maximum') ?? 1e6;
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case 'string':
      return stringArb(s);
    case 'array': {
      const items = s.items && typeof s.items === 'object' ? (s.items as Schema) : {};
      const minLength = num(s, 'minItems') ?? 0;
      const maxLength = Math.max(minLength, Math.min(num(s, 'maxItems') ?? 4, 4));
      if (depth >= MAX_DEPTH) return fc.constant(Array.from({ length: minLength }, () => null));
      return fc.array(valueArb(doc, items, hints, undefined, depth + 1), { minLength, maxLength });
    }
    case 'object':
      return objectArb(doc, s, hints, depth);
    default:
      // `{}` (any JSON value, e.g. ciphertext `data`) or a schema this generator does not know
      if (s.properties) return objectArb(doc, s, hints, depth);
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectArb(doc: OpenApiDoc, s: Schema, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  if (Object.keys(props).length === 0) return depth >= MAX_DEPTH ? fc.constant({}) : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) model[k] = valueArb(doc, v, hints, k, depth + 1);
  return fc.record(model, { requiredKeys: required.filter((k) => k in props) });
}

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  'date-time': fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  date: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  uuid: fc.uuid(),
  email: fc.emailAddress(),
  uri: fc.webUrl(),
};

function stringArb(s: Schema): fc.Arbitrary<string> {
  const minLength = num(s, 'minLength') ?? 0;
  const maxLength = num(s, 'maxLength');
  const fit = (a: fc.Arbitrary<string>): fc.Arbitrary<string> => a.filter((v) => v.length >= minLength && (maxLength === undefined || v.length <= maxLength));
  if (typeof s.format === 'string' && FORMATS[s.format]) return fit(FORMATS[s.format]!);
  if (typeof s.pattern === 'string') return fit(fc.stringMatching(new RegExp(s.pattern)));
  const cap = Math.max(minLength, Math.min(maxLength ?? 40, 40));
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength, maxLength: cap }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength: cap }).filter((v) => v.length >= minLength && v.length <= (maxLength ?? Infinity)) },
  );
}

/** The parts of a request before it is rendered to an HTTP message. */
export interface RequestModel {
  pathValues: Record<string, string>;
  query: [string, string][];
  body: unknown;
}

/** Serialises a query value the way a browser form or a client library would. */
export function queryValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * An arbitrary of schema-valid request models for one operation. `pathOk` vetoes path values
 * (so generated ids never name the records written before the run).
 */
export function validModelArb(doc: OpenApiDoc, op: Operation, hints: Hints, pathOk: (name: string, value: string) => boolean = () => true): fc.Arbitrary<RequestModel> {
  const pathArbs: Record<string, fc.Arbitrary<string>> = {};
  const queryArbs: Record<string, fc.Arbitrary<unknown>> = {};
  const requiredQuery: string[] = [];
  for (const p of op.params) {
    if (p.in === 'path') {
      pathArbs[p.name] = valueArb(doc, { minLength: 1, ...p.schema }, hints, p.name)
        .map((v) => queryValue(v))
        .filter((v) => v.length > 0 && pathOk(p.name, v));
    } else if (p.in === 'query') {
      queryArbs[p.name] = valueArb(doc, p.schema, hints, p.name);
      if (p.required) requiredQuery.push(p.name);
    }
  }
  const body: fc.Arbitrary<unknown> = op.body ? valueArb(doc, op.body.schema, hints) : fc.constant(undefined);
  return fc
    .record({
      pathValues: Object.keys(pathArbs).length ? fc.record(pathArbs) : fc.constant({}),
      queryObj: Object.keys(queryArbs).length ? fc.record(queryArbs, { requiredKeys: requiredQuery }) : fc.constant({}),
      body,
    })
    .map(({ pathValues, queryObj, body: b }) => ({
      pathValues: pathValues as Record<string, string>,
      query: Object.entries(queryObj as Record<string, unknown>).map(([k, v]) => [k, queryValue(v)] as [string, string]),
      body: b,
    }));
}

/** Fills a templated path with raw (already encoded) segments. */
export function fillPath(template: string, segments: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => segments[name] ?? 'x');
}

/**
 * Percent-encodes any string, lone surrogates included (as their WTF-8 bytes, which is what a
 * careless client sends): encodeURIComponent throws on them, and hostile values carry them.
 */
export function encode(s: string): string {
  const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  let out = '';
  let from = 0;
  for (const m of s.matchAll(lone)) {
    const c = m[0].charCodeAt(0);
    out += encodeURIComponent(s.slice(from, m.index)) + [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => '%' + b.toString(16).toUpperCase()).join('');
    from = m.index + 1;
  }
  return out + encodeURIComponent(s.slice(from));
}

/** Percent-encodes the values of a model's path and query. */
export function encodeModel(op: Operation, m: RequestModel): { path: string; query: string } {
  const segs: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.pathValues)) segs[k] = encode(v);
  const query = m.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
  return { path: fillPath(op.path, segs), query };
}
