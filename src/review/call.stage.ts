import type { ReviewConfig } from '../config/index.js';
import { mapConcurrent } from './concurrency.js';
import { splitChunk, type ChangedFile, type ReviewChunk, type ReviewInput } from './context.js';
import { mergeOutputs } from './merge.js';
import { callModel, type ModelCallEnv } from './model-call.js';
import type { ReviewOutput } from './output.schema.js';
import { parseReviewOutput, repairFindingsPrompt, repairPrompt } from './parse-output.js';
import { chunkPrompt, type PromptContext } from './prompt.js';
import type { ReviewPrompt } from './prompt.stage.js';
import type { ModelMessage, ModelProvider, ProviderSelection } from './providers/index.js';
import type { PartOutput, PassResult } from './pass.js';
import type { SamplesReport } from './run-result.js';
import { agreeAcrossSamples } from './samples.js';
import { errorText, type Stage } from './stage.js';

/**
 * Stage `call`: every part to the model. The parts run concurrently (`VERDICT_REVIEW_CONCURRENCY`),
 * each call under its timeout and as a `model` span. Each answer is read as it arrives (parse-output.ts),
 * because what is wrong with it decides what happens next: an unusable answer, or a usable one with
 * findings that cannot be read, gets one repair attempt; an answer cut at the output token limit gets no
 * repair: the part is split in two and both halves are reviewed. The shadow model, when configured,
 * reviews the same parts after the primary (`shadow-model` spans); its pass never fails the run.
 */

export type CallInput = {
  providers: ProviderSelection;
  prompt: Pick<ReviewPrompt, 'system'>;
  /** The fitted context every part's message carries, and the parts (none: one call without a diff). */
  budgeted: { context: PromptContext; input: Pick<ReviewInput, 'chunks'> };
  config: Pick<ReviewConfig, 'timeoutMs' | 'shadowTimeoutMs' | 'concurrency'>;
  env: ModelCallEnv;
  /** `review.samples`: independent primary passes that must agree (samples.ts); absent or 1: one pass. */
  samples?: number;
  /** The changed files, whose diffs check the anchors samples are matched by. */
  gathered?: { changed: ChangedFile[] };
};

/** The shadow model's pass as stored on the run (`shadowReview`): never published. */
export type ShadowReview = {
  provider: string;
  model: string;
  status: 'analysed' | 'degraded' | 'failed';
  output: ReviewOutput | null;
  errors: Array<{ chunk: number | null; error: string }>;
};

export type Called = {
  /** The primary pass, or with several samples the findings they agreed on (samples.ts). */
  primary: PassResult;
  /** Absent without a shadow model. */
  shadow: ShadowReview | undefined;
  /** With more than one sample: how many passes and what they agreed on. */
  samples?: SamplesReport;
};

/** What every call of one pass sends and how it is traced. */
type PassSetup = {
  provider: ModelProvider;
  spanName: string;
  system: string;
  context: PromptContext;
  suppliedIds: ReadonlySet<string>;
  timeoutMs: number;
  concurrency: number;
  env: ModelCallEnv;
};

/** How one part went: its outputs (two or more when it was split), or its error. */
type PartResult = { outputs: PartOutput[]; error: string | null; retryable: boolean; splits: number };

/** A part is split at most this many times over (a part becomes at most 8 smaller ones). */
const MAX_SPLIT_DEPTH = 3;

async function call(input: CallInput): Promise<Called> {
  const { providers, config: settings, env } = input;
  const { context, input: parts } = input.budgeted;
  const setup = {
    system: input.prompt.system,
    context,
    suppliedIds: new Set(context.memory.map((m) => m.id)),
    concurrency: settings.concurrency,
    env,
  };
  const count = Math.max(1, input.samples ?? 1);
  const passes = await samplePasses(
    { ...setup, provider: providers.primary, spanName: 'model', timeoutMs: settings.timeoutMs },
    parts.chunks,
    count,
  );
  const agreed = count > 1 ? agreeAcrossSamples(passes, input.gathered?.changed ?? []) : null;
  const primary = agreed?.pass ?? passes[0]!;
  const shadow = providers.shadow
    ? await shadowPass(
        {
          ...setup,
          provider: providers.shadow,
          spanName: 'shadow-model',
          timeoutMs: settings.shadowTimeoutMs,
        },
        parts.chunks,
      )
    : undefined;
  return { primary, shadow, ...(agreed ? { samples: agreed.report } : {}) };
}

/**
 * `count` independent passes over every part: every (pass, part) call through one pool of
 * `concurrency`, the first pass's parts first. Each pass's outputs are kept in part order.
 */
async function samplePasses(setup: PassSetup, parts: ReviewChunk[], count: number): Promise<PassResult[]> {
  const chunks: Array<ReviewChunk | null> = parts.length > 0 ? parts : [null];
  const run = { ...setup, total: chunks.length };
  const calls = Array.from({ length: count }, (_, sample) =>
    chunks.map((chunk, index) => ({ sample, chunk, index })),
  ).flat();
  const done = await mapConcurrent(calls, setup.concurrency, async ({ sample, chunk, index }) => {
    if (setup.env.signal.aborted) throw new Error('aborted');
    return reviewPart({ ...run, sample: count > 1 ? sample + 1 : null }, chunk, index, 0);
  });
  const results = Array.from({ length: count }, (): PassResult => ({
    outputs: [],
    failed: new Map(),
    retryable: false,
    splits: 0,
  }));
  done.forEach((part, i) => {
    const { sample, index } = calls[i]!;
    const result = results[sample]!;
    for (const output of part.outputs) result.outputs.push({ chunk: index, ...output });
    if (part.error !== null) result.failed.set(index, part.error);
    if (part.retryable) result.retryable = true;
    result.splits += part.splits;
  });
  return results;
}

/**
 * One part: a call, the repair attempt when the answer cannot be used, and, when the answer was cut at
 * the output token limit, no repair: the part is split in two and both halves are reviewed.
 */
async function reviewPart(
  run: PassSetup & { total: number; sample?: number | null },
  chunk: ReviewChunk | null,
  index: number,
  depth: number,
): Promise<PartResult> {
  const messages: ModelMessage[] = [{ role: 'user', content: chunkPrompt(run.context, chunk, run.total) }];
  let error: string | null = null;
  let retryable = false;
  // A usable answer with unreadable findings is kept while the repair attempt tries to do better.
  let kept: PartOutput | null = null;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const called = await callModel(run.env, {
      provider: run.provider,
      spanName: run.spanName,
      system: run.system,
      messages,
      timeoutMs: run.timeoutMs,
      attributes: {
        chunk: index,
        ...(run.sample ? { sample: run.sample } : {}),
        attempt,
        ...(depth > 0 ? { split: depth } : {}),
        files: chunk?.files.length ?? 0,
        diffTokens: chunk?.tokens ?? 0,
      },
    });
    if (!called.ok) {
      if (kept) break;
      error = called.error;
      retryable = called.retryable;
      break;
    }
    if (called.truncated) {
      const halves = chunk ? splitChunk(chunk) : null;
      if (halves && depth < MAX_SPLIT_DEPTH) return reviewHalves(run, halves, index, depth);
      if (kept) break;
      error = 'the answer was cut at the output token limit and the part cannot be split further';
      break;
    }
    const parsed = parseReviewOutput(called.text, { suppliedContextIds: run.suppliedIds });
    if (parsed.ok) {
      const candidate = {
        output: parsed.output,
        warnings: parsed.warnings,
        unreadable: parsed.unreadable.length,
        removedContextIds: parsed.removedContextIds,
      };
      if (!kept || candidate.unreadable <= kept.unreadable) kept = candidate;
      error = null;
      if (parsed.unreadable.length === 0 || attempt === 2) break;
      messages.push(
        { role: 'assistant', content: called.text },
        { role: 'user', content: repairFindingsPrompt(parsed.unreadable) },
      );
      continue;
    }
    if (kept) break;
    error = `the model call succeeded but returned no usable review JSON payload (${parsed.error})`;
    messages.push(
      { role: 'assistant', content: called.text },
      { role: 'user', content: repairPrompt(parsed.error) },
    );
  }
  return { outputs: kept ? [kept] : [], error: kept ? null : error, retryable, splits: 0 };
}

/** Both halves of a part whose answer was cut, reviewed at once; the first output says why. */
async function reviewHalves(
  run: PassSetup & { total: number; sample?: number | null },
  halves: [ReviewChunk, ReviewChunk],
  index: number,
  depth: number,
): Promise<PartResult> {
  const [a, b] = await Promise.all(halves.map((half) => reviewPart(run, half, index, depth + 1)));
  const warning = `the answer was cut at the output token limit: the part was split in two and both halves reviewed`;
  return {
    outputs: [...a!.outputs, ...b!.outputs].map((o, i) =>
      i === 0 ? { ...o, warnings: [warning, ...o.warnings] } : o,
    ),
    error: a!.error ?? b!.error,
    retryable: a!.retryable || b!.retryable,
    splits: 1 + a!.splits + b!.splits,
  };
}

/** The shadow model's pass: stored as `shadowReview`, never published, never failing the run. */
async function shadowPass(setup: PassSetup, parts: ReviewChunk[]): Promise<ShadowReview> {
  const who = { provider: setup.provider.name, model: setup.provider.model };
  try {
    const result = (await samplePasses(setup, parts, 1))[0]!;
    return {
      ...who,
      status: result.outputs.length === 0 ? 'failed' : result.failed.size > 0 ? 'degraded' : 'analysed',
      output: result.outputs.length > 0 ? mergeOutputs(result.outputs.map((o) => o.output)) : null,
      errors: [...result.failed].map(([chunk, error]) => ({ chunk, error })),
    };
  } catch (error) {
    if (setup.env.signal.aborted) throw error;
    return { ...who, status: 'failed', output: null, errors: [{ chunk: null, error: errorText(error) }] };
  }
}

export const callStage: Stage<CallInput, Called> = {
  name: 'call',
  run: call,
  counts: (called, input) => ({
    parts: Math.max(1, input.budgeted.input.chunks.length),
    answers: called.primary.outputs.length,
    failedParts: called.primary.failed.size,
    splits: called.primary.splits,
    retryable: called.primary.retryable,
    ...(called.shadow ? { shadow: called.shadow.status } : {}),
    ...(called.samples
      ? {
          samples: called.samples.count,
          samplesRequired: called.samples.required,
          samplesKept: called.samples.kept,
          samplesDropped: called.samples.dropped,
        }
      : {}),
  }),
};
