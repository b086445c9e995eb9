/**
 * The command kinds of operator-api 2.3 as both bridges read them: the Node bridge (executors.ts) and the
 * native one (src/native/worker/commands.ts). Here are each kind's payload fields and their refusals and
 * the failure a command ends with; the rules deciding what a kind does are the requeue's
 * (src/review/requeue-rules.ts) and the repository sync's (src/services/repo-sync.ts). This module imports
 * nothing Node-only, so the edge worker can bundle it.
 */
import type { RequeueRef } from '../review/requeue-rules.js';

/**
 * A command that cannot be carried out, with the reason the operator reads on the command (`error`) and a
 * short code in its `result`.
 */
export class CommandFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

/** The code a failed command ends with: a refusal's own, else `execution_error` (both bridges). */
export const failureCode = (error: unknown): string =>
  error instanceof CommandFailure ? error.code : 'execution_error';

function str(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/**
 * A required text field of a command: the payload's, else the command's own column (the Node store keeps
 * `reviewKey` and `deliveryId` on the command). Without it: `invalid_command`.
 */
export function requiredField(
  kind: string,
  field: 'reviewKey' | 'deliveryId',
  payload: Record<string, unknown>,
  column: string | null = null,
): string {
  const value = str(payload[field]) ?? column;
  if (!value) throw new CommandFailure('invalid_command', `${kind} needs a ${field}`);
  return value;
}

/** `replay-webhook`'s `force`: only `true` replays a delivery that was processed already. */
export const forced = (payload: Record<string, unknown>): boolean => payload.force === true;

/**
 * What a `requeue` command asks for: a review key, or a repository plus `number` (the command's columns
 * stand in for absent payload fields), and an optional `variant`.
 */
export function requeueRequest(
  payload: Record<string, unknown>,
  columns: { reviewKey?: string | null; repo?: string | null; prNumber?: number | null } = {},
): { ref: RequeueRef; variant: string | null } {
  return {
    ref: {
      reviewKey: str(payload.reviewKey) ?? columns.reviewKey ?? null,
      repo: str(payload.repo) ?? columns.repo ?? null,
      prNumber: Number(payload.number ?? columns.prNumber),
    },
    variant: str(payload.variant),
  };
}

/** A requeue refused because its request or variant is malformed is an invalid command. */
export const requeueFailureCode = (code: string): string =>
  code === 'invalid_request' || code === 'invalid_variant' ? 'invalid_command' : code;
