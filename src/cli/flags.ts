// What every noun's registration shares (gh's cmdutil): the common flags, and the hand-over to a
// verb that a parse-only test can stop. A leaf: it imports only commander.
import { InvalidArgumentError, Option } from 'commander';

/** The `--server` and `--json` options every client command carries. */
export function serverOption(service: string): Option {
  return new Option('--server <url>', `${service} server URL (else MKT_${service.toUpperCase()}_URL, the saved profile, or localhost)`);
}
export function jsonOption(): Option {
  return new Option('--json', 'print machine-readable JSON');
}

/** A repeatable flag's parser: each occurrence adds one value. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * What a parse-only test puts in place of the verbs (gh's `runF`): it receives the options the
 * verb would have been given, and the verb module is never loaded.
 */
export type ParsedVerb = (opts: object) => void | Promise<void>;

/**
 * Hands a verb its options. `load` holds the action's literal import() (the bundler rewrites
 * those), so without `parsed` this is exactly "import the verb, run it".
 */
export async function runVerb<O extends object>(parsed: ParsedVerb | undefined, opts: O, load: () => Promise<(opts: NoInfer<O>) => unknown>): Promise<void> {
  if (parsed) return parsed(opts);
  const verb = await load();
  await verb(opts);
}

/**
 * An option with enumerated values: commander's `.choices()`, which help, the usage error (exit 2)
 * and shell completion all read. `normalize` maps a documented spelling onto one of `values`
 * ("On Hold" → on_hold) and returns undefined for anything else.
 */
export function choiceOption(flags: string, description: string, values: readonly string[], normalize?: (raw: string) => string | undefined): Option {
  const option = new Option(flags, description).choices(values);
  if (!normalize) return option;
  // argParser keeps argChoices (help and completion still list them); the message is commander's own.
  return option.argParser((raw: string) => {
    const v = normalize(raw);
    if (v === undefined) throw new InvalidArgumentError(`Allowed choices are ${values.join(', ')}.`);
    return v;
  });
}
