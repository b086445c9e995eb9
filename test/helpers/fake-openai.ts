import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { candidatesOf } from '../../src/review/verification.js';

/** A chat completion exactly as the API returns one. */
export function completion(content: string, promptTokens: number, completionTokens: number) {
  return {
    id: `chatcmpl-${createHash('sha1').update(content).digest('hex').slice(0, 24)}`,
    object: 'chat.completion',
    created: 1_760_000_000,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_0123456789',
  };
}

export type Seen = { caseName: string | null; schema: string; answer: string };

/**
 * A local OpenAI-compatible server (`POST /v1/chat/completions`, bodies shaped as the API's): a review is
 * answered with `reviewAnswer(case)` (the case its prompt names), a verification call confirms every
 * candidate; `seen` gets every call.
 */
export function fakeOpenAI(seen: Seen[], reviewAnswer: (caseName: string) => string): Server {
  return createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      const body = JSON.parse(raw);
      const schema = String(body.response_format?.json_schema?.name ?? 'none');
      const text = body.messages.map((m: { content: string }) => m.content).join('\n');
      const caseName = /testlab\/([a-z0-9-]+)#/.exec(text)?.[1] ?? null;
      const answer =
        schema === 'verification'
          ? JSON.stringify({
              results: (candidatesOf(String(body.messages.at(-1).content)) ?? []).map((c) => ({
                id: c.id,
                verdict: 'confirmed',
                score: 90,
                reason: 'The code shows it.',
              })),
            })
          : reviewAnswer(caseName ?? '');
      seen.push({ caseName, schema, answer });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(answer, 1500, 250)));
    });
  });
}

/** Starts the fake model on a free loopback port; resolves with its base URL (`.../v1`). */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}
