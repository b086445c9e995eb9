/**
 * What the native command bridge executes once it claimed a command (review-engine 3.5, live authority).
 * `replay-webhook` reads the stored delivery (its body in D1, else the R2 object it was offloaded to) and
 * sends it to the review queue again; a delivery already processed needs `force`. The other kinds of the
 * Node bridge (`retry-publish`, `requeue`, `sync-repositories`) have no native executor and fail saying so.
 */
import type { Env } from './env.js';
import { enqueue } from './ingress.js';

/** A command that could not be done: its code and message are the command's error. */
export class CommandFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type NativeCommand = { id: string; kind: string; payload: Record<string, unknown> };

/** Dispatch outcomes after which a delivery counts as processed (a replay then needs `force`). */
const PROCESSED = new Set(['dispatched', 'skipped_completed', 'skipped_obsolete', 'ignored']);

async function replayWebhook(env: Env, command: NativeCommand): Promise<Record<string, unknown>> {
  const id = command.payload.deliveryId;
  if (typeof id !== 'string' || id === '')
    throw new CommandFailure('invalid_command', 'replay-webhook needs a deliveryId');
  const row = await env.DB.prepare(
    'SELECT id, event, dispatch_outcome, body, body_key FROM native_deliveries WHERE id = ?',
  )
    .bind(id)
    .first<{
      id: string;
      event: string;
      dispatch_outcome: string | null;
      body: string | null;
      body_key: string | null;
    }>();
  if (!row) throw new CommandFailure('delivery_not_found', `delivery ${id} is not recorded`);
  if (row.dispatch_outcome && PROCESSED.has(row.dispatch_outcome) && command.payload.force !== true)
    throw new CommandFailure(
      'delivery_processed',
      `delivery ${id} was processed (${row.dispatch_outcome}); replay it with force`,
    );
  const body =
    row.body ?? (row.body_key && env.PAYLOADS ? await (await env.PAYLOADS.get(row.body_key))?.text() : null);
  if (!body) throw new CommandFailure('payload_missing', `the body of delivery ${id} is not stored`);
  await env.DB.prepare(
    'UPDATE native_deliveries SET attempts = 0, dispatch_outcome = NULL, dispatch_reason = NULL WHERE id = ?',
  )
    .bind(id)
    .run();
  await enqueue(env, id, row.event, body);
  return { deliveryId: id, event: row.event, replayed: true, forced: command.payload.force === true };
}

export async function executeCommand(env: Env, command: NativeCommand): Promise<Record<string, unknown>> {
  if (command.kind === 'replay-webhook') return replayWebhook(env, command);
  throw new CommandFailure('no_native_executor', `command kind ${command.kind} has no native executor`);
}
