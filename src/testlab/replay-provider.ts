import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SYNTHESIS_SYSTEM } from '../review/synthesis.js';
import { confirmingAnswer, VERIFICATION_SYSTEM } from '../review/verification.js';
import {
  ModelCallError,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
} from '../review/providers/index.js';
import { estimateTokens } from '../review/budget.js';
import type { TestLabCase } from './case.js';
import { TESTLAB_OWNER } from './github-server.js';

/**
 * Which recorded answer a call is: the case is the repository named in the prompt (`testlab/<case>`), the
 * part the prompt's `## Part n of m` (part 1 when there is one); the call that combines several parts is
 * `synthesis.txt`, a repair request `part-<n>.repair.txt`.
 */
export function answerFileOf(req: ModelRequest): { caseName: string | null; file: string } {
  const first = req.messages[0]?.content ?? '';
  const repo = new RegExp(`${TESTLAB_OWNER}/([a-z0-9][a-z0-9-]*)#`).exec(first);
  const part = /^## Part (\d+) of \d+$/m.exec(first)?.[1] ?? '1';
  const synthesis = req.system === SYNTHESIS_SYSTEM;
  const repair = !synthesis && req.messages.length > 1;
  return {
    caseName: repo?.[1] ?? null,
    file: synthesis ? 'synthesis.txt' : repair ? `part-${part}.repair.txt` : `part-${part}.txt`,
  };
}

/**
 * Records what a real provider answers, per case and part, into the case's `answers/` (what `verdict
 * testlab run --record` does): the replay provider then answers the same from those files.
 */
export class RecordingProvider implements ModelProvider {
  readonly name: ModelProvider['name'];
  readonly model: string;
  readonly maxTokens: number | null | undefined;
  /** `case/file` of every answer written. */
  readonly recorded: string[] = [];

  constructor(
    private readonly inner: ModelProvider,
    private readonly cases: ReadonlyMap<string, TestLabCase>,
  ) {
    this.name = inner.name;
    this.model = inner.model;
    this.maxTokens = inner.maxTokens;
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const res = await this.inner.complete(req);
    // Verification answers are not recorded: replay does not measure verification (docs/testlab.md).
    if (isVerificationCall(req)) return res;
    const { caseName, file } = answerFileOf(req);
    const c = caseName === null ? undefined : this.cases.get(caseName);
    if (c) {
      mkdirSync(join(c.dir, 'answers'), { recursive: true });
      writeFileSync(join(c.dir, 'answers', file), res.text);
      this.recorded.push(`${c.name}/${file}`);
    }
    return res;
  }
}

/** Whether a call is a verification call (its structured output is named `verification`). */
export function isVerificationCall(req: ModelRequest): boolean {
  return req.schemaName === 'verification' || req.system === VERIFICATION_SYSTEM;
}

const lastMessage = (req: ModelRequest) => req.messages.at(-1)?.content ?? '';

/** The model name the replay provider reports. */
export const REPLAY_MODEL = 'recorded';

/**
 * The Test Lab's offline provider (`VERDICT_RUNNER_PROVIDER=replay`): it answers each call with the answer
 * recorded for that case and call (answerFileOf) in `fixtures/testlab/<case>/answers/`, so the whole corpus
 * is reviewed without a network. A call with no recorded answer fails as a model call would (code `empty`),
 * so a missing recording is a failed part, never a made-up review. Token counts are estimates of the prompt
 * and answer; the cost is 0.
 */
export class ReplayProvider implements ModelProvider {
  readonly name = 'replay' as const;
  readonly model = REPLAY_MODEL;
  readonly maxTokens = null;
  private readonly cases: Map<string, TestLabCase>;
  /** Calls answered, by `case/file`. */
  readonly served: string[] = [];
  /** Verification calls answered (each confirming every candidate). */
  verifications = 0;

  constructor(cases: readonly TestLabCase[]) {
    this.cases = new Map(cases.map((c) => [c.name, c]));
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    if (isVerificationCall(req)) {
      // Verification is not replayed from recordings: every candidate is confirmed (score 90), so replay
      // passes the parts' findings through it unchanged; only a live run measures verification.
      this.verifications++;
      return this.answer(req, confirmingAnswer(lastMessage(req)));
    }
    const { caseName, file } = answerFileOf(req);
    const c = caseName === null ? undefined : this.cases.get(caseName);
    if (!c) {
      throw new ModelCallError('empty', 'replay: the prompt names no Test Lab case', { retryable: false });
    }
    const text = c.answers.get(file);
    if (text === undefined) {
      throw new ModelCallError('empty', `replay: no recorded answer ${c.name}/answers/${file}`, {
        retryable: false,
      });
    }
    this.served.push(`${c.name}/${file}`);
    return this.answer(req, text);
  }

  private answer(req: ModelRequest, text: string): ModelResponse {
    const prompt = req.messages.map((m) => m.content).join('\n');
    return {
      text,
      usage: {
        inputTokens: estimateTokens('openai', req.system) + estimateTokens('openai', prompt),
        outputTokens: estimateTokens('openai', text),
      },
      costUsd: 0,
      provider: 'replay',
      model: REPLAY_MODEL,
      durationMs: 0,
    };
  }
}
