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
import { answersForPart, missingLines, partAnswer, shownPrompt, SYNTHESIS_ANSWER } from './authored.js';
import type { TestLabCase } from './case.js';
import { TESTLAB_OWNER } from './github-server.js';

/**
 * Which call of which case a request is: the case is the repository named in the prompt (`testlab/<case>`),
 * the part the prompt's `## Part n of m` (part 1 when there is none); the call that combines several parts
 * is `synthesis.txt`, a repair request `part-<n>.repair.txt`. `verdict testlab run --record` writes a real
 * provider's answers under these names; scripts/testlab/derive-relies.ts turns them into authored answers.
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
 * Records what a real provider answers, per case and part, into the case's `answers/` as `part-<n>.txt`
 * (what `verdict testlab run --record` does). scripts/testlab/derive-relies.ts then names them by the files
 * they cover and writes the lines they rely on, and replay serves them like the authored answers.
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
export const REPLAY_MODEL = 'authored';

const refused = (message: string) => new ModelCallError('empty', `replay: ${message}`, { retryable: false });

/**
 * The Test Lab's offline provider (`VERDICT_RUNNER_PROVIDER=replay`): it answers each review call with the
 * authored answers (authored.ts) that cover the files of the part its prompt holds, in
 * `fixtures/testlab/<case>/answers/`, so the whole corpus is reviewed without a network and whatever way
 * the files are packed into parts. It answers only when the prompt shows every line those answers rely on
 * with the number and text they name; otherwise, or when no authored answer covers the part's files, the
 * call fails as a model call would (code `empty`, not retried) and the refusal is kept by case
 * (`refusals`): the runner fails the case with it. A synthesis call is answered with `synthesis.txt`.
 * Token counts are estimates of the prompt and answer; the cost is 0.
 */
export class ReplayProvider implements ModelProvider {
  readonly name = 'replay' as const;
  readonly model = REPLAY_MODEL;
  readonly maxTokens = null;
  private readonly cases: Map<string, TestLabCase>;
  /** Calls answered, by `case/answer[+answer]` (`case/synthesis.txt` for a synthesis). */
  readonly served: string[] = [];
  /** Calls refused, by case: what the prompt lacked. */
  readonly refusals = new Map<string, string[]>();
  /** Verification calls answered (each confirming every candidate). */
  verifications = 0;

  constructor(cases: readonly TestLabCase[]) {
    this.cases = new Map(cases.map((c) => [c.name, c]));
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    if (isVerificationCall(req)) {
      // Verification is not replayed from authored answers: every candidate is confirmed (score 90), so
      // replay passes the parts' findings through it unchanged; only a live run measures verification.
      this.verifications++;
      return this.answer(req, confirmingAnswer(lastMessage(req)));
    }
    const { caseName } = answerFileOf(req);
    const c = caseName === null ? undefined : this.cases.get(caseName);
    if (!c) throw refused('the prompt names no Test Lab case');
    try {
      const text = this.answerFor(c, req);
      return this.answer(req, text);
    } catch (error) {
      const message = (error as Error).message;
      this.refusals.set(c.name, [...(this.refusals.get(c.name) ?? []), message]);
      throw refused(`${c.name}: ${message}`);
    }
  }

  private answerFor(c: TestLabCase, req: ModelRequest): string {
    if (c.answerProblems.length > 0) throw new Error(c.answerProblems.join('; '));
    if (req.system === SYNTHESIS_SYSTEM) {
      const text = c.answers.get(SYNTHESIS_ANSWER);
      if (text === undefined)
        throw new Error(`the parts need a synthesis and there is no answers/${SYNTHESIS_ANSWER}`);
      this.served.push(`${c.name}/${SYNTHESIS_ANSWER}`);
      return text;
    }
    if (req.messages.length > 1)
      throw new Error('an authored answer needed a repair (check.ts parses every answer)');
    const shown = shownPrompt(req.messages[0]?.content ?? '');
    const answers = answersForPart(c.authored, shown.files);
    if (answers.length === 0) {
      throw new Error(
        `no authored answer covers the files of part ${shown.part} (${shown.files.join(', ') || 'none shown'})`,
      );
    }
    const missing = missingLines(answers, shown);
    if (missing.length > 0) {
      const listed = missing.slice(0, 5).join('; ');
      throw new Error(
        `part ${shown.part}: the prompt does not show ${missing.length} line(s) the authored answers rely on: ${listed}${missing.length > 5 ? `; and ${missing.length - 5} more` : ''}`,
      );
    }
    this.served.push(`${c.name}/${answers.map((a) => a.name).join('+')}`);
    return partAnswer(answers, shown.files);
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
