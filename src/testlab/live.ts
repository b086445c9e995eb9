import { createHash } from 'node:crypto';
import {
  ModelCallError,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
} from '../review/providers/index.js';
import { SYNTHESIS_SYSTEM } from '../review/synthesis.js';
import { VERIFICATION_SYSTEM } from '../review/verification.js';
import { TESTLAB_OWNER } from './github-server.js';

/**
 * Live runs' answers, bound to the prompt they answered (docs/testlab.md, "Live runs"): every model call of
 * a live run is recorded with the hash of its prompt (`promptHash`: the system prompt, the structured
 * output's name and schema, and every message), and a recorded answer is replayed only to a call whose
 * prompt has the same hash. A call whose prompt changed is refused, naming the hash it was recorded for.
 */

export type CallKind = 'review' | 'repair' | 'synthesis' | 'verification';

/** One model call of a live run, as the Test Lab record keeps it. */
export type RecordedCall = {
  /** `part-<n>`, `part-<n>.repair`, `synthesis` or `verification`. */
  key: string;
  kind: CallKind;
  /** sha256 of the prompt (promptHash). */
  promptHash: string;
  /** sha256 of the answer text. */
  answerHash: string;
  answer: string;
  model: string;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  durationMs: number;
};

/** The hash of everything a model call sends: the system prompt, the structured output and the messages. */
export function promptHash(req: ModelRequest): string {
  return createHash('sha256')
    .update(
      JSON.stringify({
        system: req.system,
        schemaName: req.schemaName ?? 'review',
        jsonSchema: req.jsonSchema ?? null,
        messages: req.messages.map((m) => [m.role, m.content]),
      }),
    )
    .digest('hex');
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Which case a call is for (the repository its prompt names, `testlab/<case>`) and what call it is. */
export function callOf(req: ModelRequest): { caseName: string | null; key: string; kind: CallKind } {
  const first = req.messages[0]?.content ?? '';
  const caseName = new RegExp(`${TESTLAB_OWNER}/([a-z0-9][a-z0-9-]*)#`).exec(first)?.[1] ?? null;
  if (req.schemaName === 'verification' || req.system === VERIFICATION_SYSTEM) {
    return { caseName, key: 'verification', kind: 'verification' };
  }
  if (req.schemaName === 'synthesis' || req.system === SYNTHESIS_SYSTEM) {
    return { caseName, key: 'synthesis', kind: 'synthesis' };
  }
  const part = /^## Part (\d+) of \d+$/m.exec(first)?.[1] ?? '1';
  return req.messages.length > 1
    ? { caseName, key: `part-${part}.repair`, kind: 'repair' }
    : { caseName, key: `part-${part}`, kind: 'review' };
}

/** Recorded calls by case name. */
export type CallLog = Map<string, RecordedCall[]>;

/**
 * Wraps the providers of a live run: every call is passed to the real provider and recorded, with its
 * prompt hash and answer, under the case its prompt names. Failed calls are not recorded.
 */
export class PromptRecorder implements ModelProvider {
  readonly name: ModelProvider['name'];
  readonly model: string;
  readonly maxTokens: number | null | undefined;

  constructor(
    private readonly inner: ModelProvider,
    readonly log: CallLog,
  ) {
    this.name = inner.name;
    this.model = inner.model;
    this.maxTokens = inner.maxTokens;
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const hash = promptHash(req);
    const res = await this.inner.complete(req);
    const { caseName, key, kind } = callOf(req);
    if (caseName !== null) {
      const calls = this.log.get(caseName) ?? [];
      calls.push({
        key,
        kind,
        promptHash: hash,
        answerHash: sha256(res.text),
        answer: res.text,
        model: res.model,
        inputTokens: res.usage.inputTokens,
        outputTokens: res.usage.outputTokens,
        costUsd: res.costUsd,
        durationMs: res.durationMs,
      });
      this.log.set(caseName, calls);
    }
    return res;
  }
}

/**
 * Replays the answers a live run recorded (`verdict testlab run --from-record <id>`): a call is answered
 * with the recorded answer of its case whose prompt hash is the call's own, each recorded answer once.
 * Any other call is refused (as a failed model call, so the case fails saying why): when the case has a
 * recorded call of the same kind and part, the refusal names the hash it answered and the hash the prompt
 * has now. Token counts and costs are the recorded ones.
 */
export class RecordedAnswersProvider implements ModelProvider {
  readonly name = 'replay' as const;
  readonly maxTokens = null;
  /** Why calls were refused, one line each. */
  readonly refusals: string[] = [];
  /** Calls answered, `case/key`. */
  readonly served: string[] = [];
  private readonly used = new Set<RecordedCall>();

  constructor(
    private readonly recorded: CallLog,
    readonly model: string,
  ) {}

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const hash = promptHash(req);
    const { caseName, key } = callOf(req);
    const calls = (caseName !== null && this.recorded.get(caseName)) || [];
    const call = calls.find((c) => c.promptHash === hash && !this.used.has(c));
    if (!call) {
      const sameKey = calls.filter((c) => c.key === key);
      const why =
        sameKey.length > 0
          ? `the prompt changed: ${caseName}/${key} was recorded for prompt ${sameKey.map((c) => c.promptHash.slice(0, 16)).join(', ')}, this prompt hashes to ${hash.slice(0, 16)}`
          : `no answer of ${caseName ?? '(no case)'}/${key} was recorded (prompt ${hash.slice(0, 16)})`;
      this.refusals.push(why);
      throw new ModelCallError('empty', `recorded answers refused: ${why}`, { retryable: false });
    }
    this.used.add(call);
    this.served.push(`${caseName}/${key}`);
    return {
      text: call.answer,
      usage: { inputTokens: call.inputTokens, outputTokens: call.outputTokens },
      costUsd: call.costUsd,
      provider: 'replay',
      model: this.model,
      durationMs: 0,
    };
  }
}
