// The problems a monitor configuration is refused for, each with its file and line.
import { expect } from 'vitest';
import { ConfigError, parseMonitorConfig } from '../../src/config/monitor.js';

/** Parses `text` as m.yaml, expects a ConfigError, and returns its problems. */
export function configProblems(text: string, file = 'm.yaml'): string[] {
  let err: ConfigError | undefined;
  try {
    parseMonitorConfig(text, file);
  } catch (e) {
    err = e as ConfigError;
  }
  expect(err).toBeInstanceOf(ConfigError);
  return err!.problems;
}
