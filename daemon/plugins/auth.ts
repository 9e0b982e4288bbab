// Authentication for every service: one parser of the `Authorization` header and the session
// cookie, and one hook that asks the service's `verify` who is calling and decorates the request.
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { HttpError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, as the service's `verify` answered; undefined for an anonymous request. */
    caller?: unknown;
  }
}

/** Authorization schemes: `token` is GitHub's word for a bearer token, `License` Keygen's for a key. */
export type Scheme = 'Bearer' | 'token' | 'Basic' | 'License';

export type Credential =
  /** A token: `Bearer <t>`, `token <t>`, or HTTP Basic with the token as password (git). */
  | { kind: 'token'; scheme: 'Bearer' | 'token' | 'Basic'; token: string }
  | { kind: 'license'; key: string }
  | { kind: 'session'; value: string };

export type Presented = { kind: 'none' } | { kind: 'malformed'; reason: string } | { kind: 'credential'; credential: Credential };

/** Why a request is refused: the service's 401 may word each case its own way. */
export type Problem = { kind: 'missing' } | { kind: 'malformed'; reason: string } | { kind: 'invalid'; credential: Credential };

/** No credential is this long; a longer header is refused before any decoding or hashing. */
export const MAX_CREDENTIAL_LENGTH = 4096;
/** A Cookie header carries every cookie of the site, so it may be longer than any one credential. */
export const MAX_COOKIE_HEADER_LENGTH = 16 * 1024;

const SCHEME_WORDS: Record<string, Scheme> = { bearer: 'Bearer', token: 'token', basic: 'Basic', license: 'License' };
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function expected(schemes: readonly Scheme[]): string {
  return schemes.map((s) => (s === 'Basic' ? 'Basic <base64 user:token>' : `${s} <${s === 'License' ? 'key' : 'token'}>`)).join('" or "');
}

function basicToken(encoded: string): Presented {
  if (!BASE64.test(encoded)) return { kind: 'malformed', reason: 'Basic credentials are not valid base64' };
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(encoded, 'base64'));
  } catch {
    return { kind: 'malformed', reason: 'Basic credentials are not valid UTF-8' };
  }
  const colon = decoded.indexOf(':');
  // git sends `user:token`; a token alone as the user name is accepted too, like GitHub.
  const token = colon < 0 ? decoded : decoded.slice(colon + 1) || decoded.slice(0, colon);
  if (token === '') return { kind: 'malformed', reason: 'Basic credentials carry no token' };
  return { kind: 'credential', credential: { kind: 'token', scheme: 'Basic', token } };
}

/** Reads the `Authorization` header, accepting only the service's `schemes` (scheme words match in any case). */
export function parseAuthorization(header: string | undefined, schemes: readonly Scheme[]): Presented {
  if (header === undefined || header.trim() === '') return { kind: 'none' };
  if (header.length > MAX_CREDENTIAL_LENGTH) return { kind: 'malformed', reason: 'Authorization header is too long' };
  const m = /^([A-Za-z]+)[ \t]+(\S(?:.*\S)?)$/.exec(header.trim());
  const scheme = m ? SCHEME_WORDS[m[1]!.toLowerCase()] : undefined;
  const rest = m?.[2];
  if (!scheme || !schemes.includes(scheme) || rest === undefined) return { kind: 'malformed', reason: `Authorization header must be "${expected(schemes)}"` };
  if (scheme === 'License') return { kind: 'credential', credential: { kind: 'license', key: rest } };
  // Tokens and base64 never hold spaces: a second word is a malformed header, not part of a token.
  if (/\s/.test(rest)) return { kind: 'malformed', reason: `Authorization header must be "${expected(schemes)}"` };
  if (scheme === 'Basic') return basicToken(rest);
  return { kind: 'credential', credential: { kind: 'token', scheme, token: rest } };
}

/** Reads one cookie; a value that is not valid percent-encoding (`%ZZ`) is malformed, never an exception. */
export function parseCookie(header: string | undefined, name: string): Presented {
  if (header === undefined || header === '') return { kind: 'none' };
  if (header.length > MAX_COOKIE_HEADER_LENGTH) return { kind: 'malformed', reason: 'Cookie header is too long' };
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0 || part.slice(0, eq).trim() !== name) continue;
    let raw = part.slice(eq + 1).trim();
    if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) raw = raw.slice(1, -1);
    if (raw === '') return { kind: 'none' };
    if (raw.length > MAX_CREDENTIAL_LENGTH) return { kind: 'malformed', reason: `the ${name} cookie is too long` };
    try {
      return { kind: 'credential', credential: { kind: 'session', value: decodeURIComponent(raw) } };
    } catch {
      return { kind: 'malformed', reason: `the ${name} cookie is not valid percent-encoding` };
    }
  }
  return { kind: 'none' };
}

export interface AuthOptions<C> {
  /** The `Authorization` schemes the service accepts. */
  schemes: readonly Scheme[];
  /** The session cookie the service accepts, if any; the `Authorization` header wins when both come. */
  cookie?: string;
  /** Who presents this credential; undefined when it is wrong (unknown, revoked, expired, tampered). */
  verify(credential: Credential): C | undefined | Promise<C | undefined>;
  /** The service's 401 (one shape per service, as its spec says). */
  unauthorized(problem: Problem): HttpError;
}

/** The answer for one request: the caller (or undefined when none came), or the 401 it earned. */
type Answer<C> = { caller: C | undefined } | { refused: Error } | { pending: Promise<C | undefined> };

/** One service's authentication: parses and verifies once per request, then remembers the answer. */
export class Authenticator<C> {
  private readonly seen = new WeakMap<FastifyRequest, Answer<C>>();

  constructor(private readonly opts: AuthOptions<C>) {}

  /** What the request presents, before any verification. */
  presented(req: FastifyRequest): Presented {
    const header = parseAuthorization(req.headers.authorization, this.opts.schemes);
    if (header.kind !== 'none' || this.opts.cookie === undefined) return header;
    return parseCookie(req.headers.cookie, this.opts.cookie);
  }

  /** The caller, or undefined when no credential came; a malformed or wrong one is the service's 401. */
  optional(req: FastifyRequest): Promise<C | undefined> {
    const a = this.answer(req);
    return 'pending' in a ? a.pending : 'refused' in a ? Promise.reject(a.refused) : Promise.resolve(a.caller);
  }

  /** The caller; no credential is the service's 401 too. */
  async required(req: FastifyRequest): Promise<C> {
    const caller = await this.optional(req);
    if (caller === undefined) throw this.opts.unauthorized({ kind: 'missing' });
    return caller;
  }

  /** The 401 of a request that presents no credential where one is required. */
  missing(): HttpError {
    return this.opts.unauthorized({ kind: 'missing' });
  }

  /**
   * This request's answer, settled at once when `verify` answers at once (no promise on the
   * path of every request: a static token's check), remembered so a request is verified once.
   */
  answer(req: FastifyRequest): Answer<C> {
    let a = this.seen.get(req);
    if (a === undefined) {
      a = this.identify(req);
      this.seen.set(req, a);
      if ('pending' in a) {
        const pending = a.pending;
        // Once settled, later questions get the answer itself.
        pending.then(
          (caller) => this.seen.set(req, { caller }),
          (refused: Error) => this.seen.set(req, { refused }),
        );
      }
    }
    return a;
  }

  private identify(req: FastifyRequest): Answer<C> {
    const p = this.presented(req);
    if (p.kind === 'none') return { caller: undefined };
    if (p.kind === 'malformed') return { refused: this.opts.unauthorized({ kind: 'malformed', reason: p.reason }) };
    let verified: C | undefined | Promise<C | undefined>;
    try {
      verified = this.opts.verify(p.credential);
    } catch (err) {
      return { refused: err as Error };
    }
    if (verified instanceof Promise) return { pending: verified.then((caller) => this.accept(req, p.credential, caller)) };
    try {
      return { caller: this.accept(req, p.credential, verified) };
    } catch (err) {
      return { refused: err as Error };
    }
  }

  private accept(req: FastifyRequest, credential: Credential, caller: C | undefined): C {
    if (caller === undefined) throw this.opts.unauthorized({ kind: 'invalid', credential });
    req.caller = caller;
    return caller;
  }
}

export interface AuthHookOptions {
  /** Whether a request without a credential is refused (otherwise it passes as anonymous). */
  required: boolean;
}

export interface InstallAuthOptions extends AuthHookOptions {
  /** Which requests the hook guards; default every request of the scope. */
  applies?(req: FastifyRequest): boolean;
}

/**
 * The authentication check as an onRequest hook: a callback hook, not an async one, so that with
 * a `verify` that answers at once a request passes without a promise or a turn of the microtask
 * queue. Put on a scope by installAuth, or on chosen routes (the monitor's guard).
 */
export function authHook<C>(auth: Authenticator<C>, opts: AuthHookOptions): onRequestHookHandler {
  return (req, _reply, done) => {
    const a = auth.answer(req);
    if ('pending' in a) {
      a.pending.then((caller) => done(opts.required && caller === undefined ? auth.missing() : undefined), done);
      return;
    }
    if ('refused' in a) return done(a.refused);
    done(opts.required && a.caller === undefined ? auth.missing() : undefined);
  };
}

/** The request field (`req.caller`) the check fills, declared once per server. */
export function decorateCaller(scope: FastifyInstance): void {
  if (!scope.hasRequestDecorator('caller')) scope.decorateRequest('caller', undefined);
}

/**
 * Installs the authentication hook on `scope` (on the root instance it guards unknown routes and
 * /openapi.json too). It runs at onRequest, so a refused request costs no body parsing.
 */
export function installAuth<C>(scope: FastifyInstance, auth: Authenticator<C>, opts: InstallAuthOptions): void {
  decorateCaller(scope);
  const check = authHook(auth, opts);
  const applies = opts.applies;
  scope.addHook('onRequest', applies === undefined ? check : function (req, reply, done) {
    if (!applies(req)) return done();
    check.call(this, req, reply, done);
  });
}
