/**
 * What the ingress can tell from a verified webhook's payload alone (no I/O, no Node-only module): shared
 * by the Node ingress (webhook-handler.ts) and the native edge worker (src/native/worker/).
 */
import { parseCommand, parseThreadCommand } from '../comment-commands/parse.js';
import type { IncomingDelivery } from '../store/deliveries.js';
import { classifyEvent } from './event-filter.js';

/** Longest `x-github-delivery` and `x-github-event` accepted (the store's column sizes). */
export const MAX_DELIVERY_ID_CHARS = 200;
export const MAX_EVENT_CHARS = 100;

export type Classified = Pick<IncomingDelivery, 'repo' | 'prNumber' | 'installationId' | 'outcome'> & {
  actionable: boolean;
};

/** What the ingress can tell from the payload alone (no I/O): whether this delivery asks for work. */
export function classifyDelivery(
  event: string,
  payload: unknown,
  handles: readonly string[],
  competitors: readonly string[] = [],
): Classified {
  const p = (payload ?? {}) as Record<string, any>;
  const repo: string | null = typeof p.repository?.full_name === 'string' ? p.repository.full_name : null;
  const numbers: unknown[] = [p.pull_request?.number, p.issue?.number, p.number];
  const prNumber = numbers.find((n): n is number => typeof n === 'number') ?? null;
  const installationId: number | null = typeof p.installation?.id === 'number' ? p.installation.id : null;
  // No `{ ...base, … }` spreads: V8 builds those some 20x slower than a literal, on every webhook.
  const answer = (actionable: boolean, outcome: string): Classified => ({
    repo,
    prNumber,
    installationId,
    actionable,
    outcome,
  });
  const result = classifyEvent(event, payload);
  switch (result.action) {
    case 'ignore':
      return answer(false, result.reason);
    case 'command': {
      if (competitors.includes(result.pr.author.toLowerCase())) return answer(true, 'enqueued');
      const command = parseCommand(result.pr.body, handles);
      return command.kind === 'no_command' ? answer(false, 'no_command') : answer(true, 'enqueued');
    }
    case 'competitor_review':
      return competitors.includes(result.pr.author.toLowerCase())
        ? answer(true, 'enqueued')
        : answer(false, 'not_competitor');
    case 'thread_reply':
      // Only `@verdict ignore` and `@verdict learn` replies ask for work; whether the thread is one of
      // Verdict's is looked up by the handler.
      return parseThreadCommand(result.reply.body, handles).kind === 'no_command'
        ? answer(false, 'no_command')
        : answer(true, 'enqueued');
    case 'update_metadata':
    case 'installation':
      // Kept only to update stored state (NAMES.md): nothing that reviews or replies is queued.
      return answer(true, 'recorded');
    default:
      return answer(true, 'enqueued');
  }
}
