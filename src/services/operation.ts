import type { Logger } from 'pino';
import { z } from 'zod';
import { randomId } from '../clock.js';
import type { AccessRule, Principal as CallerPrincipal } from '../http/auth.js';
import type { GitHubClient } from '../github/client.js';
import { parseLimit } from '../http/query.js';
import type { Store } from '../store/index.js';
import { ReadCache, StampedCache } from './read-cache.js';

/**
 * One operator service, written once and served by every face: the REST route, the tRPC procedure, and
 * (where they do the same thing) the CLI and the command bridge. It names the access rule (token classes
 * and API-key scope) the network faces enforce, the input schema, and what it does. Every rule lives
 * here, so the faces cannot disagree.
 */
export type Operation<S extends z.ZodType = z.ZodType, O = unknown> = {
  rule: AccessRule;
  type: 'query' | 'mutation';
  input: S;
  run(ctx: OperationContext, input: z.output<S>): Promise<O>;
  /**
   * The output already serialized as a JSON object (what `run` resolves with, as text): REST sends it
   * without parsing or serializing again. For reads served from a serialized cache.
   */
  runSerialized?: (ctx: OperationContext, input: z.output<S>) => Promise<string>;
};

export function defineOperation<S extends z.ZodType, O>(op: Operation<S, O>): Operation<S, O> {
  return op;
}

/** What the services are built from (the composition root builds it once per process). */
export type ServiceDeps = {
  store: Store;
  log: Logger;
  now: () => number;
  newId: (prefix: string) => string;
  publicUrl: string | null;
  /** Short-lived cache of the snapshot reads. */
  cache: ReadCache;
  /** Stamp-validated cache of PR-detail reads. */
  prCache: StampedCache;
  /**
   * GitHub through the App's installation on a repository (the memory preview reads pull requests with
   * it); absent or null without App credentials.
   */
  github?: RepositoryGitHub | null;
  /** What this server runs whatever the policy says, shown beside it (`GET /settings` `server`). */
  server?: ServerState;
};

/** The operator's switches as this process resolved them (docs/validation.md). */
export type ServerState = {
  /** `VERDICT_VALIDATION_ENABLED` (`auto`: unset) and whether the validator runs here. */
  validation: { switch: 'on' | 'off' | 'auto'; running: boolean };
};

/**
 * An installation Octokit for `owner/name`. Refuses with 404 `not_found` when the App is not installed on
 * the repository.
 */
export type RepositoryGitHub = (repo: string) => Promise<GitHubClient>;

/**
 * Who asks: a caller authenticated by a network face (a static service token or an API key), or a local
 * process that holds the store's own credentials (the CLI, the command bridge) acting for `actor`.
 */
export type Principal = CallerPrincipal | { kind: 'local'; actor: string };

export type OperationContext = ServiceDeps & {
  principal: Principal;
  /** The `Idempotency-Key` of the request: null when absent, `invalid` when malformed. */
  idempotencyKey: string | null | 'invalid';
  /** `proto://host` of the request, for URLs handed back to the caller. */
  origin: string;
};

/** What the service functions that are not network operations need (the bridge's and CLI's). */
export type ServiceContext = Pick<OperationContext, 'store' | 'log' | 'now' | 'newId' | 'principal'>;

/**
 * The context of a local face (CLI, bridge): no request, so no idempotency key and no origin, and no
 * read caches (one process reading once has nothing to share them with).
 */
export function localContext(
  deps: { store: Store; log: Logger; now?: () => number; newId?: (prefix: string) => string },
  actor: string,
): OperationContext {
  return {
    store: deps.store,
    log: deps.log,
    now: deps.now ?? (() => Date.now()),
    newId: deps.newId ?? randomId,
    publicUrl: null,
    cache: new ReadCache(0),
    prCache: new StampedCache(false),
    principal: { kind: 'local', actor },
    idempotencyKey: null,
    origin: '',
  };
}

/**
 * Runs an operation for a local face: the input is validated by the operation's own schema (a refusal is
 * 400 `invalid_request`, worded as REST words it: a field of `{id, body}` input is named without `body.`); no access rule is checked, since a process with the store's credentials could
 * do anything the rule guards.
 */
export async function runLocally<S extends z.ZodType, O>(
  op: Operation<S, O>,
  ctx: OperationContext,
  raw: unknown,
): Promise<O> {
  const parsed = op.input.safeParse(raw);
  if (!parsed.success) throw badRequest(describeInput(parsed.error, 'field', 'body'));
  return op.run(ctx, parsed.data);
}

/** A refusal with the HTTP status and `error` code the spec names; extra fields join the body. */
export class OperatorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'OperatorError';
  }
}

/**
 * The access rules most operations share (operator-api 5.1, 5.2): the read token only; the read token or
 * an API key with `read`; the admin token only (no key ever opens an admin route).
 */
export const READ: AccessRule = { classes: ['operatorRead'] };
export const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };
export const ADMIN: AccessRule = { classes: ['operatorAdmin'] };

export const notFound = (message: string) => new OperatorError(404, 'not_found', message);
export const badRequest = (message: string) => new OperatorError(400, 'invalid_request', message);

export const REPO_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;
export const ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

/** A search or filter parameter: at most 300 characters (operator-api 8). */
export const searchParam = z.string().max(300, 'at most 300 characters');

/** List `limit`: default 50, clamped to 1..100; a non-integer falls back to 50 (operator-api 4.1). */
export const limitParam = z
  .union([z.number(), z.string()])
  .optional()
  .transform((v) => parseLimit(v === undefined ? null : String(v)));

/** A list's `limit` (as `limitParam`) and `offset` (default 0; anything but up to 9 digits is 0). */
export const pageParams = {
  limit: limitParam,
  offset: z
    .union([z.number(), z.string()])
    .optional()
    .transform((v) => {
      const s = v === undefined ? '' : String(v);
      return /^\d{1,9}$/.test(s) ? Number(s) : 0;
    }),
};

/** A positive integer given as a number (tRPC) or digits (query string). */
/** The largest pull-request number or id a parameter takes: a 32-bit column holds it on both dialects. */
export const PR_NUMBER_MAX = 2_147_483_647;

export const positiveIntParam = z.union([
  z.number().int().min(1).max(PR_NUMBER_MAX),
  z
    .string()
    .regex(/^[1-9]\d{0,9}$/, 'must be a positive integer')
    .transform(Number)
    .pipe(z.number().max(PR_NUMBER_MAX)),
]);

/** `Invalid <noun> <path>: <message>` for the first issue of an input (without a leading `strip` segment). */
export function describeInput(error: z.ZodError, noun: 'parameter' | 'field', strip?: string): string {
  const issue = error.issues[0];
  if (!issue) return `Invalid ${noun}`;
  let path = issue.path.map(String);
  if (strip !== undefined && path[0] === strip) path = path.slice(1);
  if (issue.code === 'unrecognized_keys' && issue.keys[0]) path = [...path, issue.keys[0]];
  const name = path.length > 0 ? path.join('.') : 'body';
  return `Invalid ${noun} ${name}: ${issue.message}`;
}
