// The contract between the server harness and a service: what `mkt serve <service>`
// opens, registers into fastify, starts after listening, reloads on SIGHUP, and closes.
import type { FastifyInstance } from 'fastify';
import type { Logger } from './logger.js';
import type { Clock } from '../src/util/clock.js';
import type { OpenApiInfo } from './plugins/openapi.js';
import type { ServerTimeouts } from './timeouts.js';

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  configPath?: string;
  /** Service-specific flags (`--token`, `--peer`, `--sync-interval`, ...). */
  flags: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  /** Overrides of the server timeouts (`--idle-timeout` and friends); defaults otherwise. */
  timeouts?: Partial<ServerTimeouts>;
}

export interface ServiceContext {
  options: ServeOptions;
  logger: Logger;
  clock: Clock;
  /** One line for a person at start-up (for example a generated token), printed once. */
  announce(line: string): void;
}

export interface ServiceRuntime {
  openapi: OpenApiInfo;
  securitySchemes?: Record<string, unknown>;
  /** Largest accepted request body in bytes; default 1 MiB. */
  bodyLimit?: number;
  /** Registers the routes (an encapsulated plugin) onto the app. */
  register(app: FastifyInstance): Promise<void>;
  /** Starts schedules once the server listens. */
  start?(app: FastifyInstance): Promise<void> | void;
  /** SIGHUP: re-read configuration; throws to keep the running one. */
  reload?(): Promise<void>;
  /** Stops schedules and closes the store. */
  close(): Promise<void>;
}

export interface ServiceModule {
  open(ctx: ServiceContext): Promise<ServiceRuntime>;
}
