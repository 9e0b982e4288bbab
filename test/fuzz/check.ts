// The fuzz suite's assertions on each answer (no 5xx, a JSON `{"error": string}` body on every
// 4xx) and the printing of failures so they can be replayed: seed, index, request, response.
import type { FuzzRequest } from './mutate.js';

/**
 * The longest error text an answer may carry: the servers cap theirs at 300 characters plus a
 * `… (N characters)` marker, so a 1 MiB field can never come back whole.
 */
export const MAX_ERROR_ANSWER = 340;

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** What went wrong with one exchange; `answer` is absent when no answer came at all. */
export interface Failure {
  index: number;
  problem: string;
  request: FuzzRequest;
  answer?: Answer;
}

/** Why an answer breaks the contract, or undefined when it keeps it. */
export function judge(req: FuzzRequest, res: Answer): string | undefined {
  if (res.status >= 500) return `${res.status} (server error)`;
  if (res.status >= 400) {
    // HEAD answers carry no body by definition
    if (req.method === 'HEAD') return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.body);
    } catch {
      return `${res.status} without a JSON body`;
    }
    if (!parsed || typeof parsed !== 'object' || typeof (parsed as { error?: unknown }).error !== 'string') return `${res.status} without {"error": string}`;
    const text = (parsed as { error: string }).error;
    if (text.length > MAX_ERROR_ANSWER) return `${res.status} with an error text of ${text.length} characters (echoes input?)`;
  }
  return undefined;
}

/** Replaces every secret in a text with `***` (tokens, passwords and keys never get printed). */
export function mask(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 6) out = out.split(s).join('***');
  return out;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}

/** Printable text of a body: JSON-escaped, so NUL and control characters stay visible. */
function show(body: string | Uint8Array | undefined, max: number): string {
  if (body === undefined) return '(none)';
  if (typeof body !== 'string') return `bytes ${Buffer.from(body).toString('hex').slice(0, max)}`;
  return cut(JSON.stringify(body.length > max * 2 ? body.slice(0, max * 2) : body).slice(1, -1), max) + (body.length > max * 2 ? ` (${body.length} chars)` : '');
}

/** A reproducer for one failure: the replay command, the request and the answer. */
export function describeFailure(f: Failure, ctx: { service: string; seed: number; secrets: string[] }): string {
  const r = f.request;
  const headers = Object.entries(r.headers)
    .map(([k, v]) => `    ${k}: ${cut(mask(v, ctx.secrets), 80)}`)
    .join('\n');
  const lines = [
    `${f.problem} — ${r.op} [${r.kind}, credentials: ${r.auth}]`,
    `  replay: MKT_FUZZ_SEED=${ctx.seed} MKT_FUZZ_ONLY=${f.index} npx vitest run test/fuzz/${ctx.service}.fuzz.test.ts`,
    `  request: ${r.method} ${cut(mask(r.path, ctx.secrets), 200)}`,
    headers,
    `    body: ${mask(show(r.body, 200), ctx.secrets)}`,
    f.answer ? `  answer: ${f.answer.status} ${mask(show(f.answer.body, 300), ctx.secrets)}` : '  answer: none',
  ];
  return lines.filter(Boolean).join('\n');
}

/** One line per distinct failure class: the same operation, mutation and problem count once. */
export function failureKey(f: Failure): string {
  const error = f.answer ? /"error":"([^"]{0,60})/.exec(f.answer.body)?.[1] ?? '' : '';
  return `${f.request.op} | ${f.request.kind} | ${f.problem.replace(/\(.*\)/, '')} | ${error.replace(/[0-9a-f]{8,}/g, '#')}`;
}
