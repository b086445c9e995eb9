import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FakeGitHub } from '../helpers/fake-github.js';
import { githubTarball } from '../helpers/tarball.js';
import { eventually, example, sign } from '../helpers/webhooks.js';
import { FakeModel, HEAD, REPO, containerTestEnv, fakeGitHub } from './container/fakes.js';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const SECRET = 'native-dev-secret';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function files(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/**
 * `npm run native:dev` as a user runs it (the script, its Miniflare worker and its container process),
 * against a local fake GitHub and a fake model: the "done when" for the native runtime.
 */
describe('npm run native:dev', () => {
  let child: ChildProcess;
  let github: FakeGitHub;
  let model: FakeModel;
  let data: string;
  let base: string;
  let output = '';

  beforeAll(async () => {
    model = new FakeModel();
    const modelUrl = await model.listen();
    github = fakeGitHub();
    await github.listen();
    // The head's archive, validated by the sandbox process native:dev starts.
    github.tarballs.set(HEAD, await githubTarball(resolve('fixtures/validation/passing'), 'acme-web-head'));
    data = mkdtempSync(join(tmpdir(), 'verdict-native-dev-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn('npm', ['run', 'native:dev'], {
      env: {
        ...process.env,
        ...containerTestEnv(modelUrl, github),
        NODE_OPTIONS: '',
        PORT: String(port),
        VERDICT_CONTAINER_PORT: String(await freePort()),
        VERDICT_SANDBOX_PORT: String(await freePort()),
        VERDICT_NATIVE_DATA: data,
        GITHUB_WEBHOOK_SECRET: SECRET,
        APP_ID: '4242',
        PRIVATE_KEY: privateKey,
        GITHUB_API_URL: `http://${github.host}/api/v3`,
        VERDICT_PUBLISH_MODE: 'live',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await eventually(async () => output.includes('native-dev-ready'), 60_000).catch((err) => {
      throw new Error(`${(err as Error).message}; native:dev printed:\n${output.slice(-4000)}`);
    });
  }, 90_000);

  afterAll(async () => {
    if (child?.pid && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
    await model?.close();
    await github?.close();
    rmSync(data, { recursive: true, force: true });
  });

  const post = async (payload: unknown, id: string) => {
    const raw = JSON.stringify(payload);
    const res = await fetch(`${base}/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-delivery': id,
        'x-github-event': 'pull_request',
        'x-hub-signature-256': sign(raw, SECRET),
      },
      body: raw,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('answers /health and nothing else of the operator surface', async () => {
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true });
    expect((await fetch(`${base}/operator/api/runs`)).status).toBe(404);
  });

  it('takes a signed 100 KiB webhook through R2, dedupes its redelivery, and publishes the review', async () => {
    const payload = example('pull_request', 'opened');
    payload.installation = { id: 77 };
    Object.assign(payload.repository, { full_name: REPO, name: 'web' });
    payload.repository.owner.login = 'acme';
    payload.number = 7;
    payload.pull_request.number = 7;
    payload.pull_request.head.sha = HEAD;
    payload.pull_request.body = 'x'.repeat(100 * 1024);
    const id = crypto.randomUUID();
    expect(await post(payload, id)).toEqual({
      status: 202,
      body: { accepted: true, ignored: false, outcome: 'enqueued', deliveryId: id },
    });
    expect(await post(payload, id)).toEqual({
      status: 200,
      body: { accepted: true, ignored: true, outcome: 'duplicate_delivery', deliveryId: id },
    });
    // Offloaded: the object store holds the body (Miniflare persists R2 under the data directory).
    expect(files(join(data, 'r2')).length).toBeGreaterThan(0);
    await eventually(async () => github.submittedReviews().length === 1, 60_000).catch((err) => {
      throw new Error(`${(err as Error).message}; native:dev printed:\n${output.slice(-4000)}`);
    });
    const review = github.submittedReviews()[0]!;
    expect(review.commit_id).toBe(HEAD);
    expect(JSON.stringify(review)).toContain('Eviction races with writes');
    expect(review.body).toMatch(/PASSED bubblewrap: npm (run )?test/);
    expect(model.reviewCalls).toBe(1);
  }, 90_000);
});
