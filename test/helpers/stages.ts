import { ManualClock } from '../../src/clock.js';
import type { ChangedFile } from '../../src/review/context.js';
import type { ModelCallEnv } from '../../src/review/model-call.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../src/review/providers/index.js';
import type { RunScope, SpanInput } from '../../src/review/stage.js';

/** What the review stages' tests share: a run, changed files, a fake model provider and a model env. */

export const HEAD = 'c'.repeat(40);

/** The run `acme/web#7` at HEAD. */
export function runScope(over: Partial<RunScope> = {}): RunScope {
  return {
    runId: 'run_1',
    reviewKey: 'acme/web#7@cccccccccccc',
    repo: 'acme/web',
    owner: 'acme',
    name: 'web',
    prNumber: 7,
    headSha: HEAD,
    createdAt: 1_000,
    ...over,
  };
}

/** A changed source file whose patch adds `lines` lines at the top. */
export function changedFile(path: string, lines = 3, over: Partial<ChangedFile> = {}): ChangedFile {
  const body = Array.from({ length: lines }, (_, i) => `+const v${i} = ${i};`).join('\n');
  return {
    filename: path,
    status: 'modified',
    additions: lines,
    deletions: 0,
    changes: lines,
    patch: `@@ -1,0 +1,${lines} @@\n${body}`,
    ...over,
  };
}

/** A model answer: its text, or a response with more (truncated, usage), or an error to throw. */
export type FakeAnswer = string | Error | (Partial<ModelResponse> & { text: string });

/**
 * A model provider that answers each call with `answer(request, n)` (n counts from 1) and keeps every
 * request it was sent. Usage is 100 input and 10 output tokens at $0.001 unless the answer says otherwise.
 */
export function fakeProvider(
  answer: (req: ModelRequest, n: number) => FakeAnswer,
  over: Partial<Pick<ModelProvider, 'name' | 'model' | 'maxTokens'>> = {},
): ModelProvider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  const name = over.name ?? 'openai';
  const model = over.model ?? 'gpt-4o-mini';
  return {
    name,
    model,
    maxTokens: over.maxTokens ?? null,
    requests,
    async complete(req) {
      requests.push(req);
      const a = answer(req, requests.length);
      if (a instanceof Error) throw a;
      const response = typeof a === 'string' ? { text: a } : a;
      return {
        usage: { inputTokens: 100, outputTokens: 10 },
        costUsd: 0.001,
        provider: name,
        model,
        durationMs: 1,
        ...response,
      };
    },
  };
}

/** A model env on a manual clock whose spans are kept in `spans`. */
export function modelEnv(over: Partial<ModelCallEnv> = {}): ModelCallEnv & { spans: SpanInput[] } {
  const spans: SpanInput[] = [];
  return {
    clock: new ManualClock(),
    signal: new AbortController().signal,
    contextTokens: null,
    span: async (s) => {
      spans.push(s);
    },
    spans,
    ...over,
  };
}

/** The user message of a request (the part's prompt). */
export function userMessage(req: ModelRequest): string {
  return req.messages[0]!.content;
}
