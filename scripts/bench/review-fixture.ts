import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { requestReview } from '../../src/review/request.js';
import type { RunRecord } from '../../src/store/runs.js';
import { createVerdict, type Verdict } from '../../src/compose/server.js';

/**
 * What the review benchmarks share: local fake servers (GitHub's API through `GHE_HOST`, an
 * OpenAI-compatible model), a Verdict process-in-process against them with publication in shadow mode,
 * and a review requested and waited for. Nothing leaves the machine.
 */

export function readBody(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve(text === '' ? null : JSON.parse(text));
    });
  });
}

export function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

export const portOf = (s: Server) => (s.address() as AddressInfo).port;

/** Answers as the Chat Completions API does. */
export function sendCompletion(res: ServerResponse, model: string, content: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
    }),
  );
}

export type BenchVerdict = {
  verdict: Verdict;
  /** Requests a review of `owner/name#1` at `headSha` and waits until its run is finished. */
  review(headSha: string, trigger: string): Promise<RunRecord>;
  stop(): Promise<void>;
};

/** A Verdict against the fake servers, with `owner/name` installed (installation 9) and enabled. */
export async function benchVerdict(opts: {
  github: Server;
  model: Server;
  modelName: string;
  owner: string;
  name: string;
  env?: Record<string, string>;
}): Promise<BenchVerdict> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-'));
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    VERDICT_DB_PATH: join(dir, 'verdict.sqlite'),
    VERDICT_SCHEDULER: '0',
    APP_ID: '1',
    PRIVATE_KEY: privateKey,
    GITHUB_WEBHOOK_SECRET: 'bench',
    GHE_HOST: `127.0.0.1:${portOf(opts.github)}`,
    GHE_PROTOCOL: 'http',
    VERDICT_RUNNER_PROVIDER: 'openai',
    VERDICT_RUNNER_MODEL: opts.modelName,
    OPENAI_API_KEY: 'sk-bench',
    VERDICT_OPENAI_BASE_URL: `http://127.0.0.1:${portOf(opts.model)}/v1`,
    VERDICT_PUBLISH_MODE: 'shadow',
    VERDICT_GITHUB_RETRIES: '0',
    ...opts.env,
  });
  const verdict = await createVerdict(config, { log: createLogger('silent') });
  await verdict.listen();
  const store = verdict.store;
  const repo = `${opts.owner}/${opts.name}`;
  await store.repositories.upsertInstalled(repo, 9);
  await store.repositories.configure(repo, { enabled: true }, { actor: 'bench', reason: null });
  return {
    verdict,
    async review(headSha, trigger) {
      const { run } = await requestReview(store, {
        owner: opts.owner,
        repo: opts.name,
        number: 1,
        headSha,
        installationId: 9,
        trigger,
        variant: null,
      });
      verdict.reviewWorker!.kick();
      const deadline = Date.now() + 300_000;
      for (;;) {
        const r = await store.runs.get(run.id);
        if (r && !['queued', 'running'].includes(r.status) && r.analysisStatus !== 'pending') return r;
        if (Date.now() > deadline) throw new Error(`run ${run.id} did not finish in 5 minutes`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      await verdict.stop();
      opts.github.close();
      opts.model.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
