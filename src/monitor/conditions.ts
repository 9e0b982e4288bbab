// Conditions on an HTTP answer (a subset of Gatus' language): `[PLACEHOLDER] OP VALUE`, parsed
// once when the configuration is read, evaluated against each answer. No eval: a small parser
// and a path walker over the parsed JSON body only.

/** What a condition can look at: one HTTP answer. */
export interface ConditionAnswer {
  status: number;
  responseTimeMs: number;
  /** The body as text (possibly cut at the check's body limit). */
  body: string;
  /** Milliseconds until the server certificate expires; undefined when not https or unknown. */
  certificateExpiresInMs?: number;
}

/** A parsed condition; plain data (the engine compares configurations as JSON). */
export interface Condition {
  /** The condition as written, for error messages. */
  text: string;
  // The parsed form: filled in by the parser (implementation in progress).
  [k: string]: unknown;
}

export class ConditionSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConditionSyntaxError';
  }
}

/** Parses one condition; throws ConditionSyntaxError saying what is wrong. */
export function parseCondition(text: string): Condition {
  throw new ConditionSyntaxError(`conditions are not supported yet: ${text}`);
}

/** Whether any condition reads [CERTIFICATE_EXPIRATION] (the check then reads the certificate). */
export function needsCertificate(conditions: readonly Condition[]): boolean {
  return conditions.some((c) => c.text.includes('[CERTIFICATE_EXPIRATION]'));
}

/** The first failing condition's message (`condition failed: ... (was ...)`), or undefined when all hold. */
export function evaluateConditions(conditions: readonly Condition[], answer: ConditionAnswer): string | undefined {
  void answer;
  return conditions.length ? `condition failed: ${conditions[0]!.text}` : undefined;
}
