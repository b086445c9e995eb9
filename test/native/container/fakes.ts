import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomId, systemClock } from '../../../src/clock.js';
import { NATIVE_STATE_TABLES, INTERNAL_HOST_HEADER, type StateBundle } from '../../../src/native/protocol.js';
import { requestReview } from '../../../src/review/request.js';
import { openStore } from '../../../src/store/index.js';
import type { RunRecord } from '../../../src/store/runs.js';
import { FakeGitHub } from '../../helpers/fake-github.js';
import {
  CONFIRM_ALL,
  FILES,
  HEAD,
  NAME,
  OWNER,
  REPO,
  completion,
  isVerification,
  review,
  verificationCandidates,
} from '../../helpers/review-harness.js';

export { HEAD, REPO };

function readJson(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve(text === '' ? null : JSON.parse(text));
    });
  });
}

const origin = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/**
 * The worker's side of the internal hosts, as a local server (VERDICT_INTERNAL_ORIGIN): `state.internal`
 * answers `/bundle` with the bundle and records every `/flush`; `broker.internal` answers `/token`. Each
 * request must name its host in `x-verdict-internal-host`.
 */
export class FakeInternal {
  readonly calls: Array<{ host: string; path: string; body: any }> = [];
  readonly flushes: any[] = [];
  /** When set, a flush is recorded and answered only once it resolves. */
  flushGate: Promise<void> | null = null;
  /** How many of the next flushes D1 refuses (500 state_write_failed, nothing written). */
  failFlushes = 0;
  private readonly server: Server;

  constructor(private readonly bundle: StateBundle) {
    this.server = createServer(async (req, res) => {
      const body = await readJson(req);
      const host = String(req.headers[INTERNAL_HOST_HEADER] ?? '');
      this.calls.push({ host, path: req.url ?? '', body });
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (host === 'state.internal' && req.url === '/bundle') return answer(200, this.bundle);
      if (host === 'state.internal' && req.url === '/flush') {
        this.flushes.push(body);
        if (this.flushGate) await this.flushGate;
        if (this.failFlushes > 0) {
          this.failFlushes -= 1;
          return answer(500, { error: { code: 'state_write_failed', message: 'D1 refused a row' } });
        }
        return answer(200, { ok: true });
      }
      if (host === 'broker.internal' && req.url === '/token') {
        return answer(200, { token: 'ghs_brokered', expiresAt: '2099-01-01T00:00:00Z' });
      }
      answer(404, { error: { code: 'not_found', message: `${host}${req.url}` } });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return origin(this.server);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * The rows the worker would hand over for one queued run of acme/web#7 at HEAD: a real store (migrated,
 * in memory) where the repository is installed and enabled and the review was requested, read out table by
 * table as NATIVE_STATE_TABLES names them.
 */
export async function seedBundle(): Promise<{ bundle: StateBundle; run: RunRecord }> {
  const store = await openStore(
    { client: 'sqlite', filename: ':memory:' },
    { clock: systemClock, ids: randomId, dedupeTtlSeconds: 604800 },
  );
  try {
    await store.repositories.upsertInstalled(REPO, 77);
    await store.repositories.configure(REPO, { enabled: true }, { actor: 'test', reason: null });
    const request = {
      owner: OWNER,
      repo: NAME,
      number: 7,
      headSha: HEAD,
      installationId: 77,
      trigger: 'opened',
    };
    const { run } = await requestReview(store, request);
    const tables: StateBundle['tables'] = {};
    for (const t of NATIVE_STATE_TABLES) {
      if (t.scope === 'write') continue;
      tables[t.table] = (await store.db.knex(t.table).select('*')) as Array<Record<string, unknown>>;
    }
    return { bundle: { tables }, run };
  } finally {
    await store.close();
  }
}

export const RACE = {
  severity: 'high',
  category: 'concurrency',
  path: 'src/cache.ts',
  title: 'Eviction races with writes',
  body: 'evict() runs between get and set.',
  contextIds: [],
  line: 2,
};

/**
 * An OpenAI-compatible model: the review raises RACE, verification confirms it. `gate`, when set, holds
 * the review call until it resolves (`reviewCalls` counts the review calls that arrived).
 */
export class FakeModel {
  reviewCalls = 0;
  gate: Promise<void> | null = null;
  private readonly server: Server;

  constructor() {
    this.server = createServer(async (req, res) => {
      const body = await readJson(req);
      let answer: unknown;
      if (isVerification(body)) {
        answer = CONFIRM_ALL(verificationCandidates(body), body);
      } else {
        this.reviewCalls += 1;
        if (this.gate) await this.gate;
        answer = review({ findings: [RACE] });
      }
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(JSON.stringify(answer))));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `${origin(this.server)}/v1`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export function fakeGitHub(): FakeGitHub {
  return new FakeGitHub({ repo: REPO, number: 7, head: HEAD, files: FILES, compare: {}, contents: {} });
}

/** The container's environment in the tests: the fake model and the fake GitHub (GHE-style host). */
export function containerTestEnv(modelUrl: string, github: FakeGitHub): Record<string, string> {
  return {
    VERDICT_MODEL_PROVIDER: 'openai',
    VERDICT_MODEL: 'gpt-4o-mini',
    OPENAI_API_KEY: 'sk-fake',
    VERDICT_OPENAI_BASE_URL: modelUrl,
    GHE_HOST: github.host,
    GHE_PROTOCOL: 'http',
    VERDICT_GITHUB_RETRIES: '0',
    LOG_LEVEL: process.env.DBG ? 'debug' : 'info',
    LOG_FORMAT: 'json',
  };
}

export function reviewRequest(run: RunRecord, over: Record<string, unknown> = {}) {
  return {
    runId: run.id,
    reviewKey: run.reviewKey,
    repo: REPO,
    prNumber: 7,
    headSha: HEAD,
    installationId: 77,
    trigger: 'opened',
    publishMode: 'live',
    leaseToken: 'lease-token-1',
    attempt: 1,
    ...over,
  };
}
