import type { Logger } from 'pino';
import type { PublicationKind, PublicationRecord, PublicationStore, StepKey } from '../store/publications.js';
import { statusOf } from '../review/gather.js';

export type PublishMode = 'live' | 'shadow';

/** One publication attempt: what it is, for which run and pull request, and what is sent. */
export type Attempt = {
  runId: string | null;
  repo: string;
  prNumber: number | null;
  kind: PublicationKind;
  body: string;
  /** What was sent beside the body (comments, annotations, GraphQL variables). */
  request?: unknown;
  /**
   * The publication this attempt belongs to, when it must happen once (docs/publication.md "Published
   * once"): the step's last attempt decides whether to send, to look on GitHub first, or to do nothing.
   */
  step?: string;
};

/** What GitHub holds of a publication, when looked up after an interrupted attempt. */
export type Found = { id: string; nodeId?: string | null };

export type Sent<T> =
  | {
      ok: true;
      id: string | null;
      /** GitHub's answer; null in shadow mode and when nothing was sent (`reused`). */
      data: T | null;
      /** Not sent: `published` when the ledger says it was, `found` when GitHub holds it. */
      reused: 'published' | 'found' | null;
      /** What a reused publication was sent with beside its body (its ledger row's `request`). */
      request: unknown;
    }
  | { ok: false; error: string; status: number | null };

export type SendOptions<T> = {
  /** The receipt of the answer (default its `id`). */
  receiptOf?: (data: T) => string | null;
  /**
   * Looks on GitHub for what an interrupted attempt may have published (the run marker of a review, the
   * external id of a check run, the marker of a reply). Without it the call is taken as safe to repeat.
   */
  find?: () => Promise<Found | null>;
};

export function githubError(error: unknown): string {
  const status = statusOf(error);
  const message = (error as Error)?.message ?? String(error);
  return status !== null ? `GitHub ${status}: ${message}` : message;
}

/**
 * Whether a failed attempt leaves GitHub's side unknown: no answer (the connection dropped, a timeout,
 * an abort) or a server error, which GitHub may give after it acted. A 4xx is a refusal: nothing was made.
 */
export function outcomeUnknown(row: Pick<PublicationRecord, 'status' | 'error'>): boolean {
  if (row.status === 'sending') return true;
  if (row.status !== 'failed') return false;
  const m = /^GitHub (\d{3}):/.exec(row.error ?? '');
  return m === null || Number(m[1]) >= 500;
}

/**
 * Request options for a call the ledger may repeat itself (one given a `find`): Octokit's own retry of
 * server errors is off for it, since it would send again without looking (the ledger looks first).
 */
export const NO_SERVER_RETRY = { request: { retries: 0 } } as const;

export type LedgerOptions = {
  /** How many times a call answered with a server error (or no answer) is looked up and sent again. */
  retries?: number;
  /** Waits between those tries (injected by tests; default a timer). */
  wait?: (ms: number) => Promise<void>;
  /**
   * A step with a `find` and no attempt on record is looked up on GitHub before it is sent: for a retry
   * whose earlier attempt's rows may be lost (the native container, whose earlier attempt may have
   * published and then failed to flush its state).
   */
  lookFirst?: boolean;
};

/**
 * The publication ledger as the publishers use it: every attempt is a row with its receipt or its error
 * (shadow mode records what would have been sent and calls nothing). An attempt that names a `step` is
 * written `sending` before the call and finished after it, so a retried publication knows where the
 * earlier one stopped: a step `published` (in shadow mode also `shadowed`) is not sent again; a step left
 * `sending`, or failed without saying whether GitHub acted, is looked up on GitHub first (`find`) and
 * recorded from there when GitHub holds it. Only then is it sent, on the same row when that row was left
 * `sending`. A call with a `find` that gets a server error (or no answer) is looked up and sent again up
 * to `retries` times, waiting 1, 4, 9 s... between tries, as Octokit would have without looking.
 */
export class PublicationLedger {
  private readonly retries: number;
  private readonly wait: (ms: number) => Promise<void>;
  private readonly lookFirst: boolean;

  constructor(
    private readonly store: PublicationStore,
    private readonly mode: PublishMode,
    private readonly log: Logger,
    opts: LedgerOptions = {},
  ) {
    this.retries = opts.retries ?? 0;
    this.lookFirst = opts.lookFirst ?? false;
    this.wait = opts.wait ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async send<T>(
    attempt: Attempt,
    call: () => Promise<{ data: T }>,
    opts: SendOptions<T> = {},
  ): Promise<Sent<T>> {
    const entry = {
      runId: attempt.runId,
      repo: attempt.repo,
      prNumber: attempt.prNumber,
      kind: attempt.kind,
      body: attempt.body,
      request: attempt.request ?? null,
      step: attempt.step ?? null,
    };
    const prior = attempt.step
      ? await this.store.lastOfStep({
          runId: attempt.runId,
          repo: attempt.repo,
          prNumber: attempt.prNumber,
          step: attempt.step,
        })
      : null;
    // Shadowed counts as done only in shadow mode: a run shadowed before the App had credentials publishes.
    const done = prior?.status === 'published' || (this.mode === 'shadow' && prior?.status === 'shadowed');
    if (prior && done) {
      return { ok: true, id: prior.receipt, data: null, reused: 'published', request: prior.request };
    }
    if (this.mode === 'shadow') {
      await this.store.record({ ...entry, mode: 'shadow', status: 'shadowed', receipt: null, error: null });
      return { ok: true, id: null, data: null, reused: null, request: null };
    }
    if (prior && outcomeUnknown(prior) && opts.find) {
      const found = await this.lookUp<T>(prior, attempt, opts.find);
      if (found) return found;
    }
    // The row is written before the call when the step must happen once; reused when it was left sending.
    const row = attempt.step ? (prior?.status === 'sending' ? prior : await this.sending(entry)) : null;
    if (row && !prior && this.lookFirst && opts.find) {
      const found = await this.lookUp<T>(row, attempt, opts.find);
      if (found) return found;
    }
    for (let tries = 1; ; tries++) {
      try {
        const { data } = await call();
        const receipt = opts.receiptOf
          ? opts.receiptOf(data)
          : String((data as { id?: unknown } | null)?.id ?? '') || null;
        const node = (data as { node_id?: unknown } | null)?.node_id;
        const nodeId = typeof node === 'string' ? node : null;
        const end = { status: 'published', receipt, error: null, nodeId } as const;
        if (row) await this.store.finish(row.id, end);
        else await this.store.record({ ...entry, mode: 'live', ...end });
        return { ok: true, id: receipt, data, reused: null, request: null };
      } catch (error) {
        const message = githubError(error);
        const status = statusOf(error);
        if (row && opts.find && (status === null || status >= 500) && tries <= this.retries) {
          // GitHub may have acted before it failed: look before sending again.
          await this.wait(tries * tries * 1000);
          const found = await this.lookUp<T>(row, attempt, opts.find, message);
          if (found) return found;
          continue;
        }
        const end = { status: 'failed', receipt: null, error: message } as const;
        if (row) await this.store.finish(row.id, end);
        else await this.store.record({ ...entry, mode: 'live', ...end });
        this.log.warn(
          { event: 'publish-failed', kind: attempt.kind, runId: attempt.runId, err: message },
          `could not publish the ${attempt.kind}`,
        );
        return { ok: false, error: message, status };
      }
    }
  }

  private async sending(
    entry: Omit<Parameters<PublicationStore['record']>[0], 'mode' | 'status' | 'receipt' | 'error'>,
  ) {
    const row = { ...entry, mode: 'live' as const, status: 'sending' as const, receipt: null, error: null };
    const id = await this.store.record(row);
    return { id, status: row.status, error: null, nodeId: null, request: entry.request ?? null };
  }

  /**
   * The receipt of a step that was published, or that an interrupted attempt published (found on GitHub
   * and recorded now); null when it was not (or cannot be known: the look-up failed, or shadow mode).
   */
  async receiptOf(
    key: StepKey,
    kind: PublicationKind,
    find: () => Promise<Found | null>,
  ): Promise<string | null> {
    const prior = await this.store.lastOfStep(key);
    if (!prior) return null;
    if (prior.status === 'published') return prior.receipt;
    if (this.mode === 'shadow' || !outcomeUnknown(prior)) return null;
    const found = await this.lookUp(prior, { kind, runId: key.runId, step: key.step }, find);
    return found?.ok ? found.id : null;
  }

  /**
   * Looks on GitHub for what an attempt whose outcome is unknown published (`error`: what the current
   * attempt was answered). Found: its row is finished as published with GitHub's id (nothing is sent).
   * Not found: null (send). The look-up itself failing: the attempt fails, nothing is sent (sending
   * without knowing could publish twice; a retry or `retry-publish` looks again).
   */
  private async lookUp<T>(
    row: Pick<PublicationRecord, 'id' | 'status' | 'error' | 'nodeId' | 'request'>,
    attempt: Pick<Attempt, 'kind' | 'runId' | 'step'>,
    find: () => Promise<Found | null>,
    error: string | null = null,
  ): Promise<Sent<T> | null> {
    let found: Found | null;
    try {
      found = await find();
    } catch (lookupError) {
      const message = `${error ? `${error}; then ` : ''}looking for the ${attempt.kind} an interrupted attempt may have published: ${githubError(lookupError)}`;
      this.log.warn({
        event: 'publish-lookup-failed',
        kind: attempt.kind,
        runId: attempt.runId,
        err: message,
      });
      if (row.status === 'sending') {
        await this.store.finish(row.id, { status: 'failed', receipt: null, error: message });
      }
      return { ok: false, error: message, status: statusOf(lookupError) };
    }
    this.log.info(
      {
        event: found ? 'publish-recovered' : 'publish-not-found',
        kind: attempt.kind,
        step: attempt.step,
        runId: attempt.runId,
        receipt: found?.id ?? null,
      },
      found
        ? `the ${attempt.kind} of an interrupted attempt is on GitHub: recorded, not sent again`
        : `the ${attempt.kind} of an interrupted attempt is not on GitHub: sending it`,
    );
    if (!found) return null;
    const nodeId = found.nodeId ?? row.nodeId;
    // An attempt GitHub acted on keeps the error it was answered with; one left sending by a crash had none.
    const kept = error ?? (row.status === 'failed' ? row.error : null);
    await this.store.finish(row.id, { status: 'published', receipt: found.id, error: kept, nodeId });
    return { ok: true, id: found.id, data: null, reused: 'found', request: row.request };
  }
}

/** Most pages of a listing read to find an earlier attempt's own item (100 a page). */
const MAX_OWN_PAGES = 30;

/**
 * The first item of a paginated listing (at most 30 pages) that `own` picks, found by the marker its body
 * carries: what an interrupted attempt may have posted.
 */
export async function findOwn<T extends { id: number; node_id?: string | null }>(
  pages: AsyncIterable<{ data: T[] }>,
  own: (item: T) => boolean,
): Promise<Found | null> {
  let read = 0;
  for await (const page of pages) {
    const item = page.data.find(own);
    if (item) return { id: String(item.id), nodeId: item.node_id ?? null };
    if (++read >= MAX_OWN_PAGES) break;
  }
  return null;
}
