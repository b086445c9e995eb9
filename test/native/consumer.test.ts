import { generateKeyPairSync, verify } from 'node:crypto';
import { example, prComment } from '../helpers/webhooks.js';
import { startIngress, until, type Harness } from './harness.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

const HEAD = 'c0ffee0000000000000000000000000000000001';
const reviews: any[] = [];
const githubCalls: string[] = [];
let containerAnswer: () => Response = () => Response.json({ runId: 'x', status: 'completed' });

/** GitHub's token and pull-request endpoints; the App JWT is verified with the App's public key. */
async function github(request: Request): Promise<Response> {
  const url = new URL(request.url);
  githubCalls.push(`${request.method} ${url.pathname}`);
  const auth = request.headers.get('authorization') ?? '';
  if (url.pathname === '/app/installations/77/access_tokens') {
    const [h, c, sig] = auth.replace('Bearer ', '').split('.');
    const ok = verify('RSA-SHA256', Buffer.from(`${h}.${c}`), publicKey, Buffer.from(sig!, 'base64url'));
    const claims = JSON.parse(Buffer.from(c!, 'base64url').toString());
    if (!ok || claims.iss !== '4242') return Response.json({ message: 'Bad credentials' }, { status: 401 });
    return Response.json({ token: 'ghs_installation', expires_at: '2030-01-01T00:00:00Z' }, { status: 201 });
  }
  if (url.pathname === '/repos/Codertocat/Hello-World/pulls/2' && auth === 'token ghs_installation') {
    return Response.json({ number: 2, head: { sha: HEAD } });
  }
  return Response.json({ message: 'Not Found' }, { status: 404 });
}

async function container(request: Request): Promise<Response> {
  const body = await request.json();
  reviews.push(body);
  return containerAnswer();
}

let h: Harness;
beforeAll(async () => {
  h = await startIngress({
    consumer: true,
    container,
    github,
    bindings: {
      APP_ID: '4242',
      PRIVATE_KEY: privateKey,
      GITHUB_API_URL: 'https://api.github.test',
      MAX_ATTEMPTS: '3',
    },
  });
});
afterAll(() => h.close());
beforeEach(() => {
  reviews.length = 0;
  githubCalls.length = 0;
  containerAnswer = () => Response.json({ runId: 'x', status: 'completed' });
});

const opened = (sha = 'a'.repeat(40), number = 2) => {
  const p = example('pull_request', 'opened');
  p.installation = { id: 77 };
  p.number = number;
  p.pull_request.number = number;
  p.pull_request.head.sha = sha;
  return p;
};

async function outcome(id: string): Promise<any> {
  const db = await h.d1();
  return until(
    () => db.prepare('SELECT * FROM native_deliveries WHERE id = ?').bind(id).first(),
    (row: any) => row?.dispatch_outcome != null,
  );
}

async function deliver(event: string, payload: unknown): Promise<any> {
  const id = crypto.randomUUID();
  const r = await h.post(event, payload, { id });
  expect(r.status).toBe(202);
  return outcome(id);
}

describe('native consumer: dispatch outcomes of 3.4', () => {
  it('dispatches a pull request to the container once; a redelivery of the same head is skipped_completed', async () => {
    const sha = 'b'.repeat(40);
    const first = await deliver('pull_request', opened(sha, 11));
    expect(first.dispatch_outcome).toBe('dispatched');
    expect(reviews).toHaveLength(1);
    expect(reviews[0]).toMatchObject({
      repo: 'Codertocat/Hello-World',
      prNumber: 11,
      headSha: sha,
      installationId: 77,
      trigger: 'opened',
      publishMode: 'shadow',
      attempt: 1,
      reviewKey: `Codertocat/Hello-World#11@${sha}`,
    });
    const db = await h.d1();
    const run = await db
      .prepare('SELECT status FROM native_runs WHERE id = ?')
      .bind(reviews[0].runId)
      .first();
    expect(run.status).toBe('completed');
    const second = await deliver('pull_request', opened(sha, 11));
    expect(second.dispatch_outcome).toBe('skipped_completed');
    expect(reviews).toHaveLength(1);
  });

  it('a review comment resolves the head through GitHub with a minted installation token', async () => {
    const row = await deliver('issue_comment', prComment('@verdict review', { commentId: 9001 }));
    expect(row.dispatch_outcome).toBe('dispatched');
    expect(githubCalls).toEqual([
      'POST /app/installations/77/access_tokens',
      'GET /repos/Codertocat/Hello-World/pulls/2',
    ]);
    expect(reviews[0]).toMatchObject({ headSha: HEAD, trigger: 'comment' });
    expect(reviews[0].reviewKey).toBe(`Codertocat/Hello-World#2@${HEAD}:comment-9001`);
  });

  it('status and help comments are ignored no_review_command, without a reply or a dispatch', async () => {
    for (const body of ['@verdict status', '@verdict help']) {
      const row = await deliver('issue_comment', prComment(body));
      expect(row).toMatchObject({ dispatch_outcome: 'ignored', dispatch_reason: 'no_review_command' });
    }
    expect(reviews).toHaveLength(0);
    expect(githubCalls).toHaveLength(0);
  });

  it('a delivery without an installation is dead_lettered unroutable', async () => {
    const p = opened('c'.repeat(40), 12);
    delete p.installation;
    const row = await deliver('pull_request', p);
    expect(row).toMatchObject({ dispatch_outcome: 'dead_lettered', dispatch_reason: 'unroutable' });
  });

  it('a run whose lease another owner holds is skipped_locked', async () => {
    const sha = 'd'.repeat(40);
    const db = await h.d1();
    const now = new Date().toISOString();
    await db
      .prepare(
        `INSERT INTO native_runs (id, review_key, repo, pr_number, head_sha, trigger, status, created_at, updated_at)
         VALUES ('run-locked', ?, 'Codertocat/Hello-World', 13, ?, 'opened', 'running', ?, ?)`,
      )
      .bind(`Codertocat/Hello-World#13@${sha}`, sha, now, now)
      .run();
    const ns: any = await h.mf.getDurableObjectNamespace('LEASES', 'verdict');
    const stub = ns.get(ns.idFromName('run-locked'));
    const got = await stub.fetch('https://lease/acquire', {
      method: 'POST',
      body: JSON.stringify({ token: 'other-owner', leaseMs: 1800000 }),
    });
    expect(await got.json()).toEqual({ status: 'acquired' });
    const row = await deliver('pull_request', opened(sha, 13));
    expect(row.dispatch_outcome).toBe('skipped_locked');
    expect(reviews).toHaveLength(0);
  });

  it('a superseded run is skipped_obsolete', async () => {
    const sha = 'e'.repeat(40);
    const db = await h.d1();
    const now = new Date().toISOString();
    await db
      .prepare(
        `INSERT INTO native_runs (id, review_key, repo, pr_number, head_sha, trigger, status, created_at, updated_at)
         VALUES ('run-old', ?, 'Codertocat/Hello-World', 14, ?, 'opened', 'superseded', ?, ?)`,
      )
      .bind(`Codertocat/Hello-World#14@${sha}`, sha, now, now)
      .run();
    const row = await deliver('pull_request', opened(sha, 14));
    expect(row.dispatch_outcome).toBe('skipped_obsolete');
  });

  it('a container HTTP failure keeps its error body and is retried until MAX_ATTEMPTS dead-letters it', async () => {
    containerAnswer = () =>
      Response.json({ error: { code: 'container_busy', message: 'a review is running' } }, { status: 503 });
    const id = crypto.randomUUID();
    expect((await h.post('pull_request', opened('f'.repeat(40), 15), { id })).status).toBe(202);
    const db = await h.d1();
    const row = await until(
      () => db.prepare('SELECT * FROM native_deliveries WHERE id = ?').bind(id).first(),
      (r: any) => r?.dispatch_outcome === 'dead_lettered',
    );
    expect(row).toMatchObject({
      dispatch_outcome: 'dead_lettered',
      dispatch_reason: 'max_attempts',
      attempts: 4,
    });
    expect(reviews).toHaveLength(3);
    expect(reviews.map((r) => r.attempt)).toEqual([1, 2, 3]);
  });
});
