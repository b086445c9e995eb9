import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import { guard, type AccessRule, type ServiceTokens } from '../http/auth.js';
import { readJsonBody } from '../http/json.js';
import { parseLimit } from '../http/query.js';
import { sendJson, type Router } from '../http/router.js';
import { COMMAND_STATUSES, type CommandKind, type NewCommand } from '../store/commands.js';
import type { Store } from '../store/index.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters');

/** `{owner}/{repo}#{pr}@{headSha}` with an optional `:{variant}` (NAMES.md). */
export const REVIEW_KEY_PATTERN =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}#[1-9]\d{0,9}@(?:[0-9a-f]{40}|[0-9a-f]{64})(?::[A-Za-z0-9._-]{1,100})?$/;
const REPO_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;
const ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

const reviewKey = z
  .string()
  .regex(REVIEW_KEY_PATTERN, 'must be a review key {owner}/{repo}#{pr}@{headSha}[:{variant}]');
const commandId = z.string().regex(ID_PATTERN, 'must be 1 to 200 printable characters without spaces');
const common = {
  reason: text(1000).optional(),
  actorId: text(200).optional(),
  commandId: commandId.optional(),
};

export const requeueBody = z
  .strictObject({
    reviewKey: reviewKey.optional(),
    repo: z.string().regex(REPO_PATTERN, 'must be owner/name').optional(),
    number: z.number().int().min(1).max(2_147_483_647).optional(),
    variant: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be 1 to 100 letters, digits, dots, dashes or underscores')
      .optional(),
    ...common,
  })
  .superRefine((b, ctx) => {
    const byKey = b.reviewKey !== undefined;
    const byPr = b.repo !== undefined || b.number !== undefined;
    if (byKey === byPr) {
      ctx.addIssue({
        code: 'custom',
        path: ['reviewKey'],
        message: 'give either reviewKey, or repo plus number',
      });
    } else if (byPr && (b.repo === undefined || b.number === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [b.repo === undefined ? 'repo' : 'number'],
        message: 'repo and number go together',
      });
    }
  });

export const retryPublishBody = z.strictObject({ reviewKey, ...common });

export const replayWebhookBody = z.strictObject({
  deliveryId: z.string().regex(ID_PATTERN, 'must be 1 to 200 printable characters without spaces'),
  force: z.boolean().optional(),
  ...common,
});

const epochOrIso = z.union([
  z.number().int().min(0).max(8_640_000_000_000_000),
  z.iso.datetime({ offset: true }).transform((s) => Date.parse(s)),
]);

export const patchCommandBody = z.strictObject({
  status: z.enum(COMMAND_STATUSES),
  startedAt: epochOrIso.optional(),
  completedAt: epochOrIso.optional(),
  error: text(4000).nullable().optional(),
  result: z
    .unknown()
    .refine((v) => v === undefined || JSON.stringify(v).length <= 64 * 1024, 'must be at most 64 KiB of JSON')
    .optional(),
});

const COMMAND: AccessRule = { classes: ['operatorCommand'] };
const BRIDGE: AccessRule = { classes: ['operatorBridge'] };
const COMMAND_READ: AccessRule = { classes: ['operatorBridge', 'operatorRead'] };

function idempotencyKey(req: IncomingMessage): string | null | 'invalid' {
  const raw = req.headers['idempotency-key'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return null;
  return ID_PATTERN.test(value) ? value : 'invalid';
}

/**
 * Command creation, update and reads (operator-api 2.3, 3, 4.1, 4.3). The command id is the
 * `Idempotency-Key` header, else the body's `commandId`, else generated; an existing id answers 200
 * `created: false` with the stored command (its payload is not compared).
 */
export function registerCommandRoutes(
  router: Router,
  deps: { store: Store; tokens: ServiceTokens; log: Logger; newId: () => string },
): void {
  const { store } = deps;
  const auth = { tokens: deps.tokens, apiKeys: store.apiKeys };

  const create = <S extends z.ZodType>(
    kind: CommandKind,
    schema: S,
    describe: (body: z.infer<S>) => Omit<NewCommand, 'id' | 'kind' | 'actor' | 'reason' | 'requestedActorId'>,
  ) =>
    router.add('POST', `/operator/api/commands/${kind}`, async (req, res) => {
      const who = await guard(req, res, auth, COMMAND);
      if (!who) return;
      const headerKey = idempotencyKey(req);
      if (headerKey === 'invalid') {
        req.resume();
        return sendJson(res, 400, {
          ok: false,
          error: 'invalid_request',
          message: 'Invalid header Idempotency-Key: must be 1 to 200 printable characters without spaces',
        });
      }
      const body = await readJsonBody(req, res, schema, 64 * 1024);
      if (!body.ok) return;
      const value = body.value as z.infer<S> & { commandId?: string; reason?: string; actorId?: string };
      const id = headerKey ?? value.commandId ?? deps.newId();
      const result = await store.commands.create({
        id,
        kind,
        actor: who.actor,
        reason: value.reason ?? null,
        requestedActorId: value.actorId ?? null,
        ...describe(body.value),
      });
      deps.log.info(
        { event: 'command-created', commandId: id, kind, created: result.created, actor: who.actor },
        result.created ? 'operator command queued' : 'operator command already exists',
      );
      sendJson(res, result.created ? 202 : 200, {
        ok: true,
        created: result.created,
        command: result.command,
      });
    });

  create('requeue', requeueBody, (b) => {
    const payload: Record<string, unknown> = {};
    if (b.reviewKey) payload.reviewKey = b.reviewKey;
    if (b.repo) payload.repo = b.repo;
    if (b.number) payload.number = b.number;
    if (b.variant) payload.variant = b.variant;
    const fromKey = b.reviewKey ? /^([^#]+)#(\d+)@/.exec(b.reviewKey) : null;
    return {
      payload,
      reviewKey: b.reviewKey ?? null,
      repo: b.repo ?? fromKey?.[1] ?? null,
      prNumber: b.number ?? (fromKey ? Number(fromKey[2]) : null),
    };
  });
  create('retry-publish', retryPublishBody, (b) => {
    const fromKey = /^([^#]+)#(\d+)@/.exec(b.reviewKey)!;
    return {
      payload: { reviewKey: b.reviewKey },
      reviewKey: b.reviewKey,
      repo: fromKey[1]!,
      prNumber: Number(fromKey[2]),
    };
  });
  create('replay-webhook', replayWebhookBody, (b) => ({
    payload: { deliveryId: b.deliveryId, force: b.force ?? false },
    deliveryId: b.deliveryId,
  }));

  router.add('PATCH', '/operator/api/commands/:id', async (req, res, params) => {
    const who = await guard(req, res, auth, BRIDGE);
    if (!who) return;
    const body = await readJsonBody(req, res, patchCommandBody, 128 * 1024);
    if (!body.ok) return;
    const result = await store.commands.patch(params.id!, body.value, who.actor);
    if (result.ok) return sendJson(res, 200, { ok: true, command: result.command });
    if (result.code === 'not_found') {
      return sendJson(res, 404, { ok: false, error: 'not_found', message: 'No such command' });
    }
    const message =
      result.code === 'bridge_owned'
        ? 'sync-repositories commands are updated by the command bridge only'
        : `A ${result.command.status} command cannot become ${body.value.status}`;
    sendJson(res, 409, { ok: false, error: result.code, message, command: result.command });
  });

  router.add('GET', '/operator/api/commands', async (req, res, _params, url) => {
    if (!(await guard(req, res, auth, COMMAND_READ))) return;
    const status = url.searchParams.get('status');
    if (status !== null && !(COMMAND_STATUSES as readonly string[]).includes(status)) {
      return sendJson(res, 400, {
        ok: false,
        error: 'invalid_request',
        message: `Invalid parameter status: one of ${COMMAND_STATUSES.join(', ')}`,
      });
    }
    const commands = await store.commands.list({
      status: (status ?? undefined) as (typeof COMMAND_STATUSES)[number] | undefined,
      limit: parseLimit(url.searchParams.get('limit')),
    });
    sendJson(res, 200, { ok: true, commands });
  });

  router.add('GET', '/operator/api/commands/:id', async (req, res, params) => {
    if (!(await guard(req, res, auth, COMMAND_READ))) return;
    const command = await store.commands.get(params.id!);
    if (!command) return sendJson(res, 404, { ok: false, error: 'not_found', message: 'No such command' });
    sendJson(res, 200, { ok: true, command, events: await store.commands.events(command.id) });
  });
}
