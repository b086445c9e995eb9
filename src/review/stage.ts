import type { NewSpan } from '../store/traces.js';

/**
 * The review pipeline's shared vocabulary. Each stage is a module `*.stage.ts` of this folder with a typed
 * input and output; `engine.ts` runs them in order and records a `stage:<name>` span per stage with the
 * counts the stage names. Nothing here knows what a stage does.
 */

/** One stage of the review: its name, its work from typed input to typed output, and its span's counts. */
export type Stage<In, Out> = {
  readonly name: string;
  run(input: In): Promise<Out>;
  /** The counts its span records: numbers, kinds and reasons, never prompt or answer text. */
  counts(output: Out, input: In): Record<string, unknown>;
};

/** Who one review run is: what the stages read of the run and its repository. */
export type RunScope = {
  runId: string;
  reviewKey: string;
  /** `owner/name`. */
  repo: string;
  owner: string;
  name: string;
  prNumber: number;
  /** The head the run reviews. */
  headSha: string;
  /** When the run was created (the latest earlier run is one created before it). */
  createdAt: number;
};

/** A span of the run's trace, as a stage hands it over (the trace adds its ids and parent). */
export type SpanInput = Omit<NewSpan, 'traceId' | 'spanId' | 'parentSpanId'> & { spanId?: string };

/** Records one span of the run's trace; never throws (a span that cannot be stored is logged). */
export type RecordSpan = (span: SpanInput) => Promise<void>;

/** An error's message, for spans, warnings and the run's error. */
export function errorText(error: unknown): string {
  return (error as Error)?.message ?? String(error);
}
