// Service options (the @fastify/env idea): each service declares a TypeBox schema of what it
// accepts, and the harness checks the given options and the environment against it once, before opening it.
import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { databaseUrlFrom } from '../src/store/open.js';

/** A service option that is missing, misspelt or of the wrong type: the operator's (or the caller's) input. */
export class OptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

/** What a service module says about its options. */
export interface ServiceOptionsSpec<O> {
  /** Every key the service reads; unknown keys are refused (`additionalProperties: false`). Its `Static` is O. */
  schema: TSchema & { static: O };
  /**
   * Fills the options the environment may give too, with the precedence the service has always
   * had (an option given > its variable > the service's default), and checks their values.
   */
  fromEnv?(given: O, env: NodeJS.ProcessEnv): O;
}

/** An object schema that refuses keys it does not name. */
export function optionsObject<P extends Parameters<typeof Type.Object>[0]>(properties: P) {
  return Type.Object(properties, { additionalProperties: false });
}

function describe(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value) ?? String(value);
}

/** "expected one of "local", "s3"" for a union of literals; TypeBox's own words otherwise. */
function expectation(error: ValueError): string {
  const choices = (error.schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const);
  if (choices && choices.every((c) => c !== undefined)) return `expected one of ${choices.map((c) => JSON.stringify(c)).join(', ')}`;
  return error.message.toLowerCase();
}

/** Throws an OptionsError naming the first problem (one line), else returns the value as the schema's type. */
export function checkOptions<S extends TSchema>(service: string, schema: S, value: unknown): Static<S> {
  if (Value.Check(schema, value)) return value;
  const first = Value.Errors(schema, value).First();
  if (!first) throw new OptionsError(`invalid ${service} options`);
  const key = first.path.replace(/^\//, '').replaceAll('/', '.');
  if (first.type === ValueErrorType.ObjectAdditionalProperties) throw new OptionsError(`unknown ${service} option ${JSON.stringify(key)}`);
  throw new OptionsError(`${service} option ${JSON.stringify(key)}: ${expectation(first)}, not ${describe(first.value)}`);
}

/** Drops keys whose value is undefined, so that "not given" has one spelling. */
function defined<O extends object>(given: O): O {
  return Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as O;
}

/**
 * Once per start: the given options are checked against the schema, the environment is merged
 * in, and the result is checked again (so a variable the schema does not allow is refused too).
 */
export function resolveOptions<O extends object>(service: string, spec: ServiceOptionsSpec<O>, given: O, env: NodeJS.ProcessEnv): O {
  const checked = checkOptions(service, spec.schema, defined(given)) as O;
  if (!spec.fromEnv) return checked;
  return checkOptions(service, spec.schema, defined(spec.fromEnv(checked, env))) as O;
}

/** `databaseUrl`: PostgreSQL for the service's store, shared by several instances; else SQLite in the data dir. */
export const DatabaseOptions = {
  /** `--database-url`, else MKT_DATABASE_URL; must start with postgres:// or postgresql://. */
  databaseUrl: Type.Optional(Type.String()),
};

/** The database URL from the option, else MKT_DATABASE_URL (trimmed; blank is none). */
export function databaseUrlOption(given: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  try {
    return databaseUrlFrom(given, env);
  } catch (err) {
    throw new OptionsError((err as Error).message);
  }
}
