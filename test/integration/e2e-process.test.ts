import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  completion,
  CONFIRM_ALL,
  isVerification,
  review,
  verificationCandidates,
} from '../helpers/review-harness.js';
import { TOKENS } from '../helpers/operator.js';
import { eventually, example, postWebhook, TEST_SECRET } from '../helpers/webhooks.js';

/**
 * The real process end to end: `src/main.ts` as a child process, a signed `pull_request.opened` webhook
 * in, the review and its check run out to a local fake GitHub API (GHE_HOST / GHE_PROTOCOL) with the
 * model answered by a local fake OpenAI-compatible server. Nothing leaves the machine.
 */
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

type Recorded = { method: string; path: string; body: any };

function readBody(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text === '' ? null : JSON.parse(text));
      } catch {
        resolve(text);
      }
    });
  });
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

const port = (s: Server) => (s.address() as AddressInfo).port;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = port(s);
      s.close(() => resolve(p));
    });
  });
}

describe('the real process, end to end', () => {
  const payload = example('pull_request', 'opened');
  payload.installation = { id: 77 };
  // The example's base is `master`, its repository's default branch: reviewed without configuration.
  expect(payload.pull_request.base.ref).toBe('master');
  const repo = payload.repository.full_name as string;
  const number = payload.pull_request.number as number;
  const head = payload.pull_request.head.sha as string;
  const head2 = 'c0ffee'.padEnd(40, '0');
  const github: Recorded[] = [];
  const model: Recorded[] = [];
  const verifications: Recorded[] = [];
  /** The fake GitHub's pull request: its head and files move with the second push. */
  const state = {
    head,
    patch: '@@ -1,2 +1,3 @@\n-if (a == b) {\n+if (token === expected) {\n+  grant();\n }',
    reviews: new Map<number, any>(),
    threads: [] as Array<{ id: string; commentId: number; resolved: boolean }>,
    nextId: 31337,
  };
  const AUTH_AT_HEAD2 = 'if (timingSafeEqual(token, expected)) {\n  grant();\n}\n';
  let gh: Server;
  let llm: Server;
  let child: ChildProcess;
  let dir: string;
  let base: string;
  let logs = '';

  beforeAll(async () => {
    gh = await listen(async (req, res) => {
      const body = await readBody(req);
      const path = (req.url ?? '').replace(/^\/api\/v3/, '');
      github.push({ method: req.method!, path, body });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const pr = `/repos/${repo}/pulls/${number}`;
      if (req.method === 'POST' && /^\/app\/installations\/77\/access_tokens/.test(path)) {
        return json(201, { token: 'ghs_fake', expires_at: '2099-01-01T00:00:00Z' });
      }
      const file = { filename: 'src/auth.ts', status: 'modified', additions: 2, deletions: 1, changes: 3 };
      if (req.method === 'GET' && path.startsWith(pr + '/files'))
        return json(200, [{ ...file, patch: state.patch }]);
      if (req.method === 'GET' && path.split('?')[0] === pr) {
        const headOf = { ...payload.pull_request.head, sha: state.head };
        return json(200, { ...payload.pull_request, head: headOf, changed_files: 1, draft: false });
      }
      if (req.method === 'GET' && path.startsWith(`/repos/${repo}/compare/${head}...${head2}`)) {
        const patch =
          '@@ -1,3 +1,3 @@\n-if (token === expected) {\n+if (timingSafeEqual(token, expected)) {\n   grant();\n }';
        return json(200, { status: 'ahead', ahead_by: 1, behind_by: 0, files: [{ ...file, patch }] });
      }
      if (req.method === 'GET' && path.startsWith(`/repos/${repo}/contents/src%2Fauth.ts`)) {
        res.writeHead(200, { 'content-type': 'application/vnd.github.raw' });
        return res.end(AUTH_AT_HEAD2);
      }
      if (req.method === 'POST' && path === `/repos/${repo}/check-runs`) return json(201, { id: 4242 });
      if (req.method === 'PATCH' && path === `/repos/${repo}/check-runs/4242`) return json(200, { id: 4242 });
      if (req.method === 'POST' && path === `${pr}/reviews`) {
        const id = state.nextId++;
        state.reviews.set(id, body);
        return json(200, { id, node_id: `PRR_${id}` });
      }
      const listComments = new RegExp(`^${pr}/reviews/(\\d+)/comments`).exec(path);
      if (req.method === 'GET' && listComments) {
        const posted = state.reviews.get(Number(listComments[1]))?.comments ?? [];
        return json(
          200,
          posted.map((c: any, i: number) => {
            const id = Number(listComments[1]) * 10 + i;
            state.threads.push({ id: `PRRT_${id}`, commentId: id, resolved: false });
            return {
              id,
              node_id: `PRRC_${id}`,
              path: c.path,
              line: c.line,
              body: c.body,
              html_url: `https://github.example/${repo}/pull/${number}#discussion_r${id}`,
            };
          }),
        );
      }
      if (req.method === 'POST' && /\/comments\/\d+\/replies$/.test(path)) return json(201, { id: 1 });
      // GitHub Enterprise Server serves GraphQL at /api/graphql (Octokit derives it from the REST base URL).
      if (req.method === 'POST' && path === '/api/graphql') {
        if (/reviewThreads/.test(body.query)) {
          const nodes = state.threads.map((t) => ({
            id: t.id,
            isResolved: t.resolved,
            comments: { nodes: [{ databaseId: t.commentId }] },
          }));
          return json(200, {
            data: {
              repository: {
                pullRequest: { reviewThreads: { pageInfo: { hasNextPage: false, endCursor: null }, nodes } },
              },
            },
          });
        }
        if (/resolveReviewThread/.test(body.query)) {
          const t = state.threads.find((x) => x.id === body.variables.threadId)!;
          t.resolved = true;
          return json(200, { data: { resolveReviewThread: { thread: { id: t.id, isResolved: true } } } });
        }
        if (/minimizeComment/.test(body.query)) {
          return json(200, { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } });
        }
      }
      return json(404, { message: 'Not Found' });
    });
    const timing = {
      severity: 'blocker',
      category: 'security',
      path: 'src/auth.ts',
      title: 'Token compared with ===',
      body: 'Use a constant-time comparison.',
      contextIds: [],
      line: 1,
      suggestion: 'if (timingSafeEqual(token, expected)) {',
    };
    llm = await listen(async (req, res) => {
      const body = await readBody(req);
      // A verification call (its structured output named `verification`) confirms every candidate.
      if (isVerification(body)) {
        verifications.push({ method: req.method!, path: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify(completion(JSON.stringify(CONFIRM_ALL(verificationCandidates(body), body)))),
        );
      }
      model.push({ method: req.method!, path: req.url ?? '', body });
      const prompt: string = body.messages.at(-1).content;
      const second = prompt.includes('## Incremental review since');
      const fpOf = /fingerprint `(fp_[0-9a-f]+)` \(priorReviewKey `([^`]+)`\)/.exec(prompt);
      const answer = second
        ? review({
            findings: [
              {
                ...timing,
                severity: 'medium',
                title: 'timingSafeEqual throws on length mismatch',
                suggestion: undefined,
              },
            ],
            priorFindingDispositions: [
              {
                priorReviewKey: fpOf![2],
                fingerprint: fpOf![1],
                disposition: 'resolved',
                explanation: 'compared in constant time now',
                evidence: [
                  { headSha: head2, path: 'src/auth.ts', quote: 'if (timingSafeEqual(token, expected)) {' },
                ],
              },
            ],
          })
        : review({ findings: [timing] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(JSON.stringify(answer))));
    });
    dir = mkdtempSync(join(tmpdir(), 'verdict-e2e-'));
    const serverPort = await freePort();
    base = `http://127.0.0.1:${serverPort}`;
    child = spawn(process.execPath, ['--import', 'tsx', join(process.cwd(), 'src/main.ts')], {
      env: {
        PATH: process.env.PATH,
        PORT: String(serverPort),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        VERDICT_DB_PATH: join(dir, 'verdict.sqlite'),
        APP_ID: '123',
        PRIVATE_KEY: privateKey,
        GITHUB_WEBHOOK_SECRET: TEST_SECRET,
        GHE_HOST: `127.0.0.1:${port(gh)}`,
        GHE_PROTOCOL: 'http',
        VERDICT_RUNNER_PROVIDER: 'openai',
        VERDICT_RUNNER_MODEL: 'gpt-4o-mini',
        OPENAI_API_KEY: 'sk-fake',
        VERDICT_OPENAI_BASE_URL: `http://127.0.0.1:${port(llm)}/v1`,
        VERDICT_GITHUB_RETRIES: '0',
        ...TOKENS,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
    await eventually(async () => {
      try {
        return (await fetch(`${base}/health`)).ok;
      } catch {
        return false;
      }
    }, 30_000);
  }, 60_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    await new Promise((r) => (child?.exitCode !== null ? r(null) : child.once('exit', r)));
    gh?.close();
    llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a signed pull_request.opened webhook becomes a published review and a completed check run', async () => {
    const read = { authorization: `Bearer ${TOKENS.VERDICT_OPERATOR_READ_TOKEN}` };
    // Installing the App is the only step (NAMES.md "Installed means reviewed"): no operator setting.
    const installed = example('installation', 'created');
    installed.installation = { ...installed.installation, id: 77 };
    expect(installed.repositories.map((r: any) => r.full_name)).toContain(repo);
    const install = await postWebhook(base, 'installation', installed);
    expect(install.body).toMatchObject({ accepted: true, outcome: 'recorded' });
    await eventually(async () => {
      const body = (await (await fetch(`${base}/operator/api/repos`, { headers: read })).json()) as any;
      return body.repos?.find((r: any) => r.fullName === repo && r.config?.enabled === true) ?? null;
    }, 20_000);

    const res = await postWebhook(base, 'pull_request', payload);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: true, outcome: 'enqueued' });

    const completed = await eventually(
      async () => github.find((r) => r.method === 'PATCH' && r.path.endsWith('/check-runs/4242')),
      60_000,
    ).catch((error) => {
      throw new Error(`${(error as Error).message}\n--- process log ---\n${logs}`);
    });
    const started = github.find((r) => r.method === 'POST' && r.path.endsWith('/check-runs'));
    expect(started!.body).toMatchObject({ name: 'Verdict / review', head_sha: head, status: 'in_progress' });
    const posted = github.find((r) => r.method === 'POST' && r.path.endsWith('/reviews'));
    expect(posted!.body).toMatchObject({ event: 'COMMENT', commit_id: head });
    expect(posted!.body.body).toContain('**Merge Status: 🔴 BLOCK**');
    expect(posted!.body.body).toContain('Token compared with ===');
    // The finding is a line comment with a committable suggestion, and a check-run annotation.
    expect(posted!.body.comments).toEqual([
      expect.objectContaining({ path: 'src/auth.ts', line: 1, side: 'RIGHT' }),
    ]);
    expect(posted!.body.comments[0].body).toContain(
      '```suggestion\nif (timingSafeEqual(token, expected)) {\n```',
    );
    expect(completed.body.output.annotations).toEqual([
      expect.objectContaining({ path: 'src/auth.ts', start_line: 1, annotation_level: 'failure' }),
    ]);
    expect(completed.body).toMatchObject({ status: 'completed', conclusion: 'neutral' });
    expect(model).toHaveLength(1);
    expect(model[0]!.path).toBe('/v1/chat/completions');
    // The finding was verified before it was posted: one verification call, naming its candidate.
    expect(verifications).toHaveLength(1);
    expect(verificationCandidates(verifications[0]!.body).map((c) => c.title)).toEqual([
      'Token compared with ===',
    ]);
    expect(JSON.stringify(model[0]!.body)).toContain('if (token === expected)');
    // The PR detail of the operator API shows the analysed and published run with its ledger. The run is
    // finished in the store just after the last GitHub call answers, so wait for it.
    const detail = await eventually(async () => {
      const body = (await (
        await fetch(`${base}/operator/api/pr?repo=${repo}&number=${number}`, { headers: read })
      ).json()) as any;
      return body.data.runs[0]?.status === 'running' ? null : body;
    }, 10_000);
    expect(detail.data.runs[0]).toMatchObject({
      status: 'completed',
      analysisStatus: 'analysed',
      publishStatus: 'published',
    });
    expect(detail.data.publications.map((p: any) => [p.kind, p.status, p.receipt])).toEqual([
      ['check_run', 'published', '4242'],
      ['review', 'published', '31337'],
      ['check_run', 'published', '4242'],
    ]);
    expect(detail.data.findings[0]).toMatchObject({ line: 1, endLine: 1 });
  }, 90_000);

  test('a push after the fix: an incremental review, the fixed thread answered and resolved, the old body hidden', async () => {
    const read = { authorization: `Bearer ${TOKENS.VERDICT_OPERATOR_READ_TOKEN}` };
    const before = github.length;
    state.head = head2;
    state.patch =
      '@@ -1,2 +1,3 @@\n-if (a == b) {\n+if (timingSafeEqual(token, expected)) {\n+  grant();\n }';
    const push = example('pull_request', 'synchronize');
    push.installation = { id: 77 };
    push.repository = payload.repository;
    push.pull_request = { ...payload.pull_request, head: { ...payload.pull_request.head, sha: head2 } };
    push.before = head;
    push.after = head2;
    const res = await postWebhook(base, 'pull_request', push);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: true, outcome: 'enqueued' });

    const detail = await eventually(async () => {
      const body = (await (
        await fetch(`${base}/operator/api/pr?repo=${repo}&number=${number}`, { headers: read })
      ).json()) as any;
      const run = body.data.runs.find((r: any) => r.headSha === head2);
      return run && run.status === 'completed' && run.publishStatus !== 'pending' ? body : null;
    }, 60_000).catch((error) => {
      throw new Error(`${(error as Error).message}\n--- process log ---\n${logs}`);
    });
    const calls = github.slice(before);
    expect(calls.some((c) => c.path.startsWith(`/repos/${repo}/compare/${head}...${head2}`))).toBe(true);
    expect(model).toHaveLength(2);
    expect(model[1]!.body.messages.at(-1).content).toContain('## Incremental review since');
    const second = calls.find((r) => r.method === 'POST' && r.path.endsWith('/reviews'))!;
    expect(second.body.commit_id).toBe(head2);
    expect(second.body.body).toContain(`Reviewed the file changed since ${head.slice(0, 7)}`);
    expect(second.body.comments).toHaveLength(1);
    expect(second.body.comments[0].body).toContain('timingSafeEqual throws on length mismatch');
    const reply = calls.find((r) => r.method === 'POST' && r.path.endsWith('/comments/313370/replies'))!;
    expect(reply.body.body).toMatch(
      new RegExp(
        `^Resolved in ${head2.slice(0, 7)}: compared in constant time now\\n\\n<!-- verdict:reply run=run_\\w+ finding=fp_[0-9a-f]+ -->$`,
      ),
    );
    expect(state.threads.find((t) => t.commentId === 313370)!.resolved).toBe(true);
    const minimize = calls.find((r) => r.path === '/api/graphql' && /minimizeComment/.test(r.body.query))!;
    expect(minimize.body.variables).toEqual({ subjectId: 'PRR_31337' });
    const run = detail.data.runs.find((r: any) => r.headSha === head2);
    expect(run).toMatchObject({ analysisStatus: 'analysed', publishStatus: 'published' });
    expect(run.result.review).toMatchObject({ kind: 'incremental', sinceSha: head, files: 1 });
  }, 90_000);
});
