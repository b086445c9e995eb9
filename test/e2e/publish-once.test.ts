import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requestReview } from '../../src/review/request.js';
import type { Store } from '../../src/store/index.js';
import type { RunRecord } from '../../src/store/runs.js';
import { FakeGitHub, type Crashable, type Trap } from '../helpers/fake-github.js';
import {
  COMPARE_AHEAD,
  CONFIRM_ALL,
  FILES,
  HEAD,
  HEAD2,
  NAME,
  OWNER,
  REPO,
  completion,
  isVerification,
  review,
  verificationCandidates,
} from '../helpers/review-harness.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, TEST_SECRET } from '../helpers/webhooks.js';

/**
 * A review is published once, even across a crash (issue 37, docs/publication.md "Published once"). A
 * real worker process (`src/worker/main.ts`) reviews a pull request against a local fake GitHub; the fake
 * kills it (SIGKILL) at a chosen point of publication: while GitHub holds a POST it acted on, or after
 * GitHub answered it (the worker frozen with SIGSTOP before the answer is written, so it never reads it,
 * and killed once it is written). A second worker then takes the job over when its lease expires. Exactly
 * one review, one check run and one reply must be on the pull request, and one ledger row of each.
 * Nothing sleeps to synchronise: each step waits for a process state or a store state.
 */
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

const RACE = {
  severity: 'high',
  category: 'concurrency',
  path: 'src/cache.ts',
  title: 'Eviction races with writes',
  body: 'evict() runs between get and set.',
  contextIds: [],
  line: 2,
};
const CACHE_TS_2 = 'export function evict(key) {\n  if (expired(key)) store.delete(key);\n}\n';
const FILES_2 = [
  {
    ...FILES[0]!,
    patch: '@@ -0,0 +1,3 @@\n+export function evict(key) {\n+  if (expired(key)) store.delete(key);\n+}',
  },
];

function readJson(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
  });
}

/**
 * The model: a first review raises one anchored finding; an incremental review (after the push that
 * fixes it) closes it with evidence at HEAD2; verification confirms every candidate.
 */
async function fakeModel(calls: string[]): Promise<Server> {
  const server = createServer(async (req, res) => {
    const body = await readJson(req);
    const prompt: string = body.messages.at(-1).content;
    let answer: unknown;
    if (isVerification(body)) {
      calls.push('verification');
      answer = CONFIRM_ALL(verificationCandidates(body), body);
    } else if (prompt.includes('## Incremental review since')) {
      calls.push('incremental');
      const prior = /fingerprint `(fp_[0-9a-f]+)` \(priorReviewKey `([^`]+)`\)/.exec(prompt)!;
      const evidence = [
        { headSha: HEAD2, path: 'src/cache.ts', quote: 'if (expired(key)) store.delete(key);' },
      ];
      answer = review({
        findings: [],
        priorFindingDispositions: [
          {
            priorReviewKey: prior[2],
            fingerprint: prior[1],
            disposition: 'resolved',
            explanation: 'evict() now checks expiry first',
            evidence,
          },
        ],
      });
    } else {
      calls.push('review');
      answer = review({ findings: [RACE] });
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completion(JSON.stringify(answer))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A worker process over the shared SQLite store, with its log kept for a failure's message. */
class WorkerProcess implements Crashable {
  readonly child: ChildProcess;
  log = '';
  /** Resolves when the process exited (killed by a trap, or stopped). */
  readonly exited: Promise<void>;

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, ['--import', 'tsx', join(process.cwd(), 'src/worker/main.ts')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d: Buffer) => (this.log += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.log += d.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  /** The process state letter of /proc/<pid>/stat (`T` when stopped). */
  private state(): string {
    const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
  }

  async freeze(): Promise<void> {
    this.child.kill('SIGSTOP');
    await eventually(async () => this.state() === 'T', 5000);
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    await this.exited;
  }
}

type Point = {
  name: string;
  /** The request the crash happens at, and how. */
  trap: Omit<Trap, 'client'>;
  /** The crash happens in the second run (the push that fixes the finding), after a first review. */
  secondRun?: boolean;
  /** What the ledger shows right after the crash: the step that was interrupted. */
  interrupted: string;
};

const reviewPost = (method: string, path: string, body: any) =>
  method === 'POST' && path === `/repos/${REPO}/pulls/7/reviews` && body?.event !== undefined;
const replyPost = (method: string, path: string) =>
  method === 'POST' && /\/pulls\/7\/comments\/\d+\/replies$/.test(path);

const POINTS: Point[] = [
  {
    name: 'GitHub holds the review POST it acted on',
    trap: { match: reviewPost, mode: 'hold' },
    interrupted: 'review',
  },
  {
    name: 'GitHub answered the review POST, the ledger has not recorded it',
    trap: { match: reviewPost, mode: 'answer' },
    interrupted: 'review',
  },
  {
    name: 'GitHub answered the check run creation, neither the ledger nor the run recorded it',
    trap: { match: (m, p) => m === 'POST' && p === `/repos/${REPO}/check-runs`, mode: 'answer' },
    interrupted: 'check:start',
  },
  {
    name: 'GitHub holds the check run completion (with its annotation) after the review was recorded',
    trap: { match: (m, p) => m === 'PATCH' && /\/check-runs\/\d+$/.test(p), mode: 'hold' },
    interrupted: 'check:complete',
  },
  {
    name: 'GitHub holds the reply in the fixed finding’s thread',
    trap: { match: replyPost, mode: 'hold' },
    secondRun: true,
    interrupted: 'thread_reply:',
  },
  {
    name: 'GitHub answered the reply in the fixed finding’s thread, the ledger has not recorded it',
    trap: { match: replyPost, mode: 'answer' },
    secondRun: true,
    interrupted: 'thread_reply:',
  },
];

describe('a review is published once, even across a crash (worker killed at each point of publication)', () => {
  let llm: Server;
  const modelCalls: string[] = [];
  let dir: string;
  let github: FakeGitHub;
  let app: RunningVerdict;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    llm = await fakeModel(modelCalls);
  });
  afterAll(async () => {
    await new Promise((resolve) => llm?.close(resolve));
  });
  beforeEach(async () => {
    modelCalls.length = 0;
    dir = mkdtempSync(join(tmpdir(), 'verdict-once-'));
    github = new FakeGitHub({
      repo: REPO,
      number: 7,
      head: HEAD,
      files: FILES,
      compare: { [`${HEAD}...${HEAD2}`]: COMPARE_AHEAD },
      contents: { [`src/cache.ts@${HEAD2}`]: CACHE_TS_2 },
    });
    await github.listen();
    // The test's own view of the store (migrated, no worker): it queues the runs and reads the results.
    app = await startVerdict({ VERDICT_DB_PATH: join(dir, 'verdict.sqlite'), VERDICT_WORKER_INLINE: '0' });
    const store = app.verdict.store;
    await store.repositories.upsertInstalled(REPO, 77);
    await store.repositories.configure(REPO, { enabled: true }, { actor: 'test', reason: null });
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    await app?.stop();
    await github?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function worker(): WorkerProcess {
    const w = new WorkerProcess({
      PATH: process.env.PATH,
      NODE_OPTIONS: '',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      VERDICT_DB_PATH: join(dir, 'verdict.sqlite'),
      APP_ID: '123',
      PRIVATE_KEY: privateKey,
      GITHUB_WEBHOOK_SECRET: TEST_SECRET,
      GHE_HOST: github.host,
      GHE_PROTOCOL: 'http',
      VERDICT_RUNNER_PROVIDER: 'openai',
      VERDICT_RUNNER_MODEL: 'gpt-4o-mini',
      OPENAI_API_KEY: 'sk-fake',
      VERDICT_OPENAI_BASE_URL: `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`,
      VERDICT_GITHUB_RETRIES: '0',
      // A killed worker's job is taken over once its lease expires.
      VERDICT_QUEUE_LEASE_SECONDS: '2',
    });
    workers.push(w);
    return w;
  }

  async function queue(store: Store, headSha: string, trigger: string): Promise<RunRecord> {
    const request = {
      owner: OWNER,
      repo: NAME,
      number: 7,
      headSha,
      installationId: 77,
      trigger,
      variant: null,
    };
    return (await requestReview(store, request)).run;
  }

  /** The run once it is finished: completed and published (or failed), its job acknowledged. */
  async function finished(store: Store, runId: string, w: WorkerProcess): Promise<RunRecord> {
    return eventually(async () => {
      const r = await store.runs.get(runId);
      if (!r || r.status !== 'completed' || r.publishStatus === 'pending') return null;
      const job = r.jobId === null ? null : await store.jobs.get(r.jobId);
      return job && job.status === 'done' ? r : null;
    }, 60_000).catch((error) => {
      throw new Error(`${(error as Error).message}\n--- worker log ---\n${w.log}`);
    });
  }

  test.each(POINTS)(
    '$name: one review, one check run, one reply, one ledger row each',
    async (point) => {
      const store = app.verdict.store;
      const first = worker();
      let firstRun: RunRecord | null = null;
      if (point.secondRun) {
        // A first review, published without a crash: its finding opens a thread.
        firstRun = await finished(store, (await queue(store, HEAD, 'opened')).id, first);
        expect(firstRun.publishStatus).toBe('published');
        github.pr.head = HEAD2;
        github.pr.files = FILES_2;
      }
      github.trap = { ...point.trap, client: first };
      const run = await queue(
        store,
        point.secondRun ? HEAD2 : HEAD,
        point.secondRun ? 'synchronize' : 'opened',
      );
      // The trap kills the worker at its point of publication.
      await first.exited;
      expect(first.child.signalCode).toBe('SIGKILL');
      expect(github.trap).toBeNull();

      // The kill point: the interrupted step's ledger row was left `sending` (written before the call).
      const before = (await store.publications.listForPr(REPO, 7)).filter((p) => p.runId === run.id);
      const interrupted = before.filter((p) => p.step?.startsWith(point.interrupted));
      expect(interrupted.map((p) => p.status)).toEqual(['sending']);

      const second = worker();
      const done = await finished(store, run.id, second);
      expect(done).toMatchObject({
        analysisStatus: 'analysed',
        publishStatus: 'published',
        publishError: null,
      });

      // On the pull request: one review per run, one check run per run, completed with its annotation once.
      const reviews = github.submittedReviews();
      expect(reviews.filter((r) => r.body.includes(`<!-- verdict:review run=${run.id} -->`))).toHaveLength(1);
      expect(reviews).toHaveLength(point.secondRun ? 2 : 1);
      const checks = [...github.checkRuns.values()].filter((c) => c.external_id === run.id);
      expect(checks).toHaveLength(1);
      expect(checks[0]).toMatchObject({ status: 'completed', name: 'Verdict / review' });
      expect(checks[0]!.annotations).toHaveLength(point.secondRun ? 0 : 1);
      expect(github.checkRuns.size).toBe(point.secondRun ? 2 : 1);

      // In the ledger: one row per step, published, with GitHub's ids.
      const ledger = (await store.publications.listForPr(REPO, 7)).filter((p) => p.runId === run.id);
      const rows = (step: string) => ledger.filter((p) => p.step === step);
      const reviewOfRun = reviews.find((r) => r.body.includes(run.id))!;
      expect(rows('review').map((p) => [p.status, p.receipt])).toEqual([
        ['published', String(reviewOfRun.id)],
      ]);
      expect(rows('check:start').map((p) => [p.status, p.receipt])).toEqual([
        ['published', String(checks[0]!.id)],
      ]);
      expect(rows('check:complete').map((p) => [p.status, p.receipt])).toEqual([
        ['published', String(checks[0]!.id)],
      ]);
      expect(ledger.every((p) => p.status === 'published')).toBe(true);
      expect(done.checkRunId).toBe(String(checks[0]!.id));

      if (point.secondRun) {
        // One reply in the fixed finding's thread, and the thread resolved.
        const thread = (await store.reviewThreads.listForPr(REPO, 7)).find((t) => t.runId === firstRun!.id)!;
        const replies = github.repliesTo(Number(thread.commentId));
        expect(replies).toHaveLength(1);
        expect(replies[0]!.body).toContain(
          `Resolved in ${HEAD2.slice(0, 7)}: evict() now checks expiry first`,
        );
        const replyRows = ledger.filter((p) => p.kind === 'thread_reply');
        expect(replyRows.map((p) => [p.status, p.receipt])).toEqual([['published', String(replies[0]!.id)]]);
        expect(github.threads.find((t) => t.commentId === Number(thread.commentId))!.resolved).toBe(true);
        expect((await store.reviewThreads.listForPr(REPO, 7)).find((t) => t.id === thread.id)!.status).toBe(
          'resolved',
        );
      } else {
        // The first run's line comment opened one thread, recorded once.
        const threads = await store.reviewThreads.listForPr(REPO, 7);
        expect(threads.map((t) => t.runId)).toEqual([run.id]);
        expect(github.comments).toHaveLength(1);
      }
      // The second worker found what the first one published on GitHub, and said so.
      expect(second.log).toContain('"event":"publish-recovered"');
    },
    120_000,
  );
});
