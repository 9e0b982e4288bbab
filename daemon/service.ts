// The contract between the server harness and a service: what `mkt serve <service>`
// opens, registers into fastify, starts after listening, reloads on SIGHUP, and closes.
import type { FastifyInstance } from 'fastify';
import type { Logger } from './logger.js';
import type { Clock } from '../src/util/clock.js';
import type { OpenApiInfo, OpenApiOptions } from './plugins/openapi.js';
import type { ServerTimeouts } from './timeouts.js';
import type { ServiceOptionsSpec } from './service-options.js';

/** Where a service runs: the same for every service. */
export interface ServerPlace {
  host: string;
  port: number;
  dataDir: string;
  configPath?: string;
  /** Read only for secrets and credentials with their own chains (secret files, S3/Stripe, tokens). */
  env: NodeJS.ProcessEnv;
}

export interface ServeOptions<O> extends ServerPlace {
  /** The service's own options (`--token`, `--peer`, `--payments`, ...), checked against its schema before it opens. */
  options: O;
  /** Overrides of the server timeouts (`--idle-timeout` and friends); defaults otherwise. */
  timeouts?: Partial<ServerTimeouts>;
}

export interface ServiceContext<O> {
  server: ServerPlace;
  /** Checked against the service's schema, the environment merged in: typed, no casts. */
  options: O;
  logger: Logger;
  clock: Clock;
  /** One line for a person at start-up (for example a generated token), printed once. */
  announce(line: string): void;
}

export interface ServiceRuntime {
  openapi: OpenApiInfo;
  securitySchemes?: Record<string, unknown>;
  /** The `security` of operations that declare none, from the rule the service's auth hook applies. */
  operationSecurity?: OpenApiOptions['security'];
  /** The address clients reach the service at (`--public-url`), named in the document's `servers`. */
  publicUrl?: string;
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

export interface ServiceModule<O> {
  /** The schema of the service's options and how the environment fills them. */
  options: ServiceOptionsSpec<O>;
  open(ctx: ServiceContext<O>): Promise<ServiceRuntime>;
}
