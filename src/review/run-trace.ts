import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '../clock.js';
import type { Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import { errorText, type SpanInput, type Stage } from './stage.js';

/**
 * The trace of one review run (docs/review-engine.md, step 1): a trace named `review`, its root span
 * `review`, and every other span a child of the root. Spans carry counts and error messages, never
 * prompt or answer bodies. A span that cannot be stored is logged and the review goes on.
 */
/**
 * A hook on stage outputs: called with each stage's name, output and input, it returns the output the
 * review goes on with. Only tests set one (the Test Lab's mutation test breaks the prompt or the parser
 * through it); absent, every output is passed on as the stage returned it.
 */
export type StageTap = (stage: string, output: unknown, input: unknown) => unknown;

export class RunTrace {
  readonly traceId: string;
  readonly rootSpanId: string;
  readonly startedAt: number;

  constructor(
    private readonly deps: { store: Store; clock: Clock; ids: IdGenerator; log: Logger; tap?: StageTap },
    private readonly run: RunRecord,
  ) {
    this.traceId = deps.ids('trc');
    this.rootSpanId = deps.ids('spn');
    this.startedAt = deps.clock.now();
  }

  /** Starts the trace; an earlier attempt whose worker was killed left its trace running: it is ended. */
  async start(attributes: Record<string, unknown>): Promise<void> {
    const { store, log } = this.deps;
    await store.traces.start({
      id: this.traceId,
      runId: this.run.id,
      reviewKey: this.run.reviewKey,
      repo: this.run.repo,
      prNumber: this.run.prNumber,
      name: 'review',
      attributes,
      startedAt: this.startedAt,
    });
    await store.traces
      .abandonRunning(this.run.id, this.traceId)
      .catch((error) =>
        log.warn(
          { event: 'trace-abandon-failed', err: errorText(error) },
          'could not end an abandoned trace',
        ),
      );
  }

  /** Records a span under the root. */
  span = async (span: SpanInput): Promise<void> => {
    try {
      await this.deps.store.traces.addSpan({
        ...span,
        traceId: this.traceId,
        spanId: span.spanId ?? this.deps.ids('spn'),
        parentSpanId: this.rootSpanId,
      });
    } catch (error) {
      this.deps.log.warn(
        { event: 'trace-span-failed', err: errorText(error) },
        'could not record a trace span',
      );
    }
  };

  /** Runs one stage of the pipeline as the span `stage:<name>`, with its counts (or its error). */
  async stage<In, Out>(stage: Stage<In, Out>, input: In): Promise<Out> {
    const startedAt = this.deps.clock.now();
    const name = `stage:${stage.name}`;
    let output: Out;
    try {
      output = await stage.run(input);
      if (this.deps.tap) output = this.deps.tap(stage.name, output, input) as Out;
    } catch (error) {
      const endedAt = this.deps.clock.now();
      await this.span({
        kind: 'stage',
        name,
        status: 'error',
        startedAt,
        endedAt,
        attributes: { error: errorText(error) },
      });
      throw error;
    }
    const attributes = stage.counts(output, input);
    await this.span({
      kind: 'stage',
      name,
      status: 'ok',
      startedAt,
      endedAt: this.deps.clock.now(),
      attributes,
    });
    return output;
  }

  /** Ends the root span and the trace. */
  async finish(status: 'ok' | 'error', attributes: Record<string, unknown>): Promise<void> {
    await this.span({
      spanId: this.rootSpanId,
      kind: 'stage',
      name: 'review',
      status,
      startedAt: this.startedAt,
      endedAt: this.deps.clock.now(),
      attributes,
    }).catch(() => undefined);
    await this.deps.store.traces.finish(this.traceId, status, attributes).catch(() => undefined);
  }
}
