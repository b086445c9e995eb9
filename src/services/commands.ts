import { z } from 'zod';
import { plainText } from '../http/text.js';
import type { AccessRule } from '../http/auth.js';
import { VARIANT_PATTERN } from '../review/requeue.js';
import { COMMAND_STATUSES, type CommandKind, type NewCommand } from '../store/commands.js';
import {
  badRequest,
  defineOperation,
  ID_PATTERN,
  limitParam,
  notFound,
  OperatorError,
  REPO_PATTERN,
  type OperationContext,
  PR_NUMBER_MAX,
} from './operation.js';
import { replayRefusal } from './webhooks.js';

/** `{owner}/{repo}#{pr}@{headSha}` with an optional `:{variant}` (NAMES.md). */
export const REVIEW_KEY_PATTERN =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}#[1-9]\d{0,9}@(?:[0-9a-f]{40}|[0-9a-f]{64})(?::[A-Za-z0-9._-]{1,100})?$/;

const reviewKey = z
  .string()
  .regex(REVIEW_KEY_PATTERN, 'must be a review key {owner}/{repo}#{pr}@{headSha}[:{variant}]')
  .refine(
    (key) => Number(/#(\d+)@/.exec(key)?.[1]) <= PR_NUMBER_MAX,
    `its pull-request number must be at most ${PR_NUMBER_MAX}`,
  );
const printableId = z.string().regex(ID_PATTERN, 'must be 1 to 200 printable characters without spaces');
const common = {
  reason: plainText(1000).optional(),
  actorId: plainText(200).optional(),
  commandId: printableId.optional(),
};

export const requeueBody = z
  .strictObject({
    reviewKey: reviewKey.optional(),
    repo: z.string().regex(REPO_PATTERN, 'must be owner/name').optional(),
    number: z.number().int().min(1).max(2_147_483_647).optional(),
    variant: z
      .string()
      .regex(VARIANT_PATTERN, 'must be 1 to 100 letters, digits, dots, dashes or underscores')
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
  deliveryId: printableId,
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
  error: plainText(4000).nullable().optional(),
  result: z
    .unknown()
    .refine((v) => v === undefined || JSON.stringify(v).length <= 64 * 1024, 'must be at most 64 KiB of JSON')
    .optional(),
});

const COMMAND: AccessRule = { classes: ['operatorCommand'] };
const BRIDGE: AccessRule = { classes: ['operatorBridge'] };
const COMMAND_READ: AccessRule = { classes: ['operatorBridge', 'operatorRead'] };

type Described = Omit<NewCommand, 'id' | 'kind' | 'actor' | 'reason' | 'requestedActorId'>;

/**
 * Command creation (operator-api 2.3, 4.3). The command id is the `Idempotency-Key` header, else the
 * body's `commandId`, else generated; an existing id answers `created: false` with the stored command
 * (its payload is not compared; REST answers it 200, a new command 202).
 */
function createOperation<S extends z.ZodType>(
  kind: CommandKind,
  schema: S,
  describe: (body: z.output<S>) => Described,
  /** Refuses a new command (never an existing id) by throwing an OperatorError. */
  precheck?: (ctx: OperationContext, body: z.output<S>) => Promise<void>,
) {
  return defineOperation({
    rule: COMMAND,
    type: 'mutation',
    input: schema,
    async run(ctx, body) {
      if (ctx.idempotencyKey === 'invalid') {
        throw badRequest(
          'Invalid header Idempotency-Key: must be 1 to 200 printable characters without spaces',
        );
      }
      const value = body as { commandId?: string; reason?: string; actorId?: string };
      const id = ctx.idempotencyKey ?? value.commandId ?? ctx.newId('cmd');
      if (precheck) {
        const existing = await ctx.store.commands.get(id);
        if (existing) return { created: false, command: existing };
        await precheck(ctx, body);
      }
      const result = await ctx.store.commands.create({
        id,
        kind,
        actor: ctx.principal.actor,
        reason: value.reason ?? null,
        requestedActorId: value.actorId ?? null,
        ...describe(body),
      });
      ctx.log.info(
        {
          event: 'command-created',
          commandId: id,
          kind,
          created: result.created,
          actor: ctx.principal.actor,
        },
        result.created ? 'operator command queued' : 'operator command already exists',
      );
      return { created: result.created, command: result.command };
    },
  });
}

const fromReviewKey = (key: string) => /^([^#]+)#(\d+)@/.exec(key);

export const commandOperations = {
  requeue: createOperation('requeue', requeueBody, (b) => {
    const payload: Record<string, unknown> = {};
    if (b.reviewKey) payload.reviewKey = b.reviewKey;
    if (b.repo) payload.repo = b.repo;
    if (b.number) payload.number = b.number;
    if (b.variant) payload.variant = b.variant;
    const fromKey = b.reviewKey ? fromReviewKey(b.reviewKey) : null;
    return {
      payload,
      reviewKey: b.reviewKey ?? null,
      repo: b.repo ?? fromKey?.[1] ?? null,
      prNumber: b.number ?? (fromKey ? Number(fromKey[2]) : null),
    };
  }),
  retryPublish: createOperation('retry-publish', retryPublishBody, (b) => {
    const fromKey = fromReviewKey(b.reviewKey)!;
    return {
      payload: { reviewKey: b.reviewKey },
      reviewKey: b.reviewKey,
      repo: fromKey[1]!,
      prNumber: Number(fromKey[2]),
    };
  }),
  replayWebhook: createOperation(
    'replay-webhook',
    replayWebhookBody,
    (b) => ({
      payload: { deliveryId: b.deliveryId, force: b.force ?? false },
      deliveryId: b.deliveryId,
    }),
    // NAMES.md: replaying a processed delivery without `force` is refused with 409 `force_required`. An
    // unknown delivery is accepted here and fails in the bridge (review-engine 7.5), and so does a queued
    // one (the delivery may be processed before the bridge runs the command).
    async (ctx, b) => {
      const delivery = await ctx.store.deliveries.get(b.deliveryId);
      const refusal = delivery && replayRefusal(b.deliveryId, delivery.status, b.force === true);
      if (refusal?.code === 'force_required') throw new OperatorError(409, refusal.code, refusal.message);
    },
  ),

  /** PATCH with the transition table of operator-api 3 (409 otherwise; the bridge owns sync commands). */
  patch: defineOperation({
    rule: BRIDGE,
    type: 'mutation',
    input: z.strictObject({ id: z.string().min(1).max(200), body: patchCommandBody }),
    async run(ctx, { id, body }) {
      const result = await ctx.store.commands.patch(id, body, ctx.principal.actor);
      if (result.ok) return { command: result.command };
      if (result.code === 'not_found') throw notFound('No such command');
      const message =
        result.code === 'bridge_owned'
          ? 'sync-repositories commands are updated by the command bridge only'
          : `A ${result.command.status} command cannot become ${body.status}`;
      throw new OperatorError(409, result.code, message, { command: result.command });
    },
  }),

  list: defineOperation({
    rule: COMMAND_READ,
    type: 'query',
    input: z.object({
      status: z.enum(COMMAND_STATUSES, { error: `one of ${COMMAND_STATUSES.join(', ')}` }).optional(),
      limit: limitParam,
    }),
    async run(ctx, input) {
      return { commands: await ctx.store.commands.list({ status: input.status, limit: input.limit }) };
    },
  }),

  get: defineOperation({
    rule: COMMAND_READ,
    type: 'query',
    input: z.object({ id: z.string().min(1).max(1000) }),
    async run(ctx, { id }) {
      const command = await ctx.store.commands.get(id);
      if (!command) throw notFound('No such command');
      return { command, events: await ctx.store.commands.events(command.id) };
    },
  }),
};
