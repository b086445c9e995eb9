import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/net.js';
import { example, postWebhook, TEST_SECRET } from '../helpers/webhooks.js';

/**
 * The command line of a package.json script, as `npm run` would start it. The long-running entry points
 * run in one node process (`node --import tsx …`): a launcher that relays signals to a child (the `tsx`
 * binary) SIGKILLs that child when it does not acknowledge a SIGTERM within 30 ms, i.e. when its event
 * loop is busy, so a stop would lose the graceful shutdown.
 */
function scriptArgv(name: string): string[] {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
    .scripts;
  // `exec`: the shell npm runs a script in becomes node, so npm's forwarded SIGTERM reaches Verdict.
  const [exec, ...argv] = scripts[name]!.split(/\s+/);
  expect([exec, ...argv.slice(0, 3)]).toEqual(['exec', 'node', '--import', 'tsx']);
  return [process.execPath, ...argv.slice(1)];
}

/** Every process a test started: a failed test's processes are killed after it, not left running. */
const children: ChildProcess[] = [];

function start(
  env: Record<string, string>,
  script = 'start',
): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const [command, ...args] = scriptArgv(script);
  const child = spawn(command!, args, {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe('the real process (npm start entry point)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'verdict-e2e-'));
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('starts without App credentials, creates the store, takes a webhook and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const db = join(dir, 'nested', 'verdict.sqlite');
    const proc = start({
      PORT: String(port),
      HOST: '127.0.0.1',
      VERDICT_DB_PATH: db,
      GITHUB_WEBHOOK_SECRET: TEST_SECRET,
      APP_ID: '',
      PRIVATE_KEY: '',
      // The dashboard on without the backend tokens its proxy needs: the start-up checks name them.
      VERDICT_OPERATOR_UI_ENABLED: '1',
      VERDICT_OPERATOR_UI_TOKEN: 'ui',
      VERDICT_OPERATOR_READ_TOKEN: '',
      VERDICT_OPERATOR_COMMAND_TOKEN: '',
      VERDICT_OPERATOR_ADMIN_TOKEN: '',
    });
    const base = `http://127.0.0.1:${port}`;
    let health: Response | null = null;
    for (let i = 0; i < 200 && !health; i++) {
      health = await fetch(`${base}/health`).catch(() => null);
      if (!health) await new Promise((r) => setTimeout(r, 100));
    }
    expect(health?.status).toBe(200);
    expect(await health!.json()).toEqual({ ok: true, service: 'verdict' });
    expect(existsSync(db)).toBe(true);
    // Logged right after the server listens: the health answer can come before the lines reach us. The
    // start-up checks end with their summary line.
    for (let i = 0; i < 100 && !proc.output().includes('"event":"startup-checks"'); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(proc.output()).toContain('shadow mode');
    // The process npm start launches is Verdict itself, so a SIGTERM reaches its handler directly.
    const started = proc
      .output()
      .split('\n')
      .map((line) => (line.startsWith('{') ? (JSON.parse(line) as { event?: string; pid?: number }) : {}))
      .find((entry) => entry.event === 'server-started');
    expect(started?.pid).toBe(proc.child.pid);
    // The start-up checks, one warning line each: the dashboard's names every token it lacks.
    const checks = proc
      .output()
      .split('\n')
      .map((line) => (line.startsWith('{') ? (JSON.parse(line) as Record<string, any>) : {}))
      .filter((entry) => entry.event === 'startup-check');
    const dashboard = checks.find((entry) => entry.check === 'dashboard');
    expect(dashboard).toMatchObject({ level: 40, status: 'fail' });
    for (const token of ['READ', 'COMMAND', 'ADMIN']) {
      expect(dashboard?.msg).toContain(`VERDICT_OPERATOR_${token}_TOKEN`);
    }
    expect(checks.find((entry) => entry.check === 'github-app')).toMatchObject({ level: 40, status: 'warn' });
    const res = await postWebhook(base, 'pull_request', example('pull_request', 'opened'));
    expect(res.status).toBe(202);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  }, 60_000);

  test('with VERDICT_WORKER_INLINE=0 the server only ingests and a separate worker process handles the delivery', async () => {
    const port = await freePort();
    const env = {
      HOST: '127.0.0.1',
      VERDICT_DB_PATH: join(dir, 'shared.sqlite'),
      GITHUB_WEBHOOK_SECRET: TEST_SECRET,
      APP_ID: '',
      PRIVATE_KEY: '',
    };
    const server = start({ ...env, PORT: String(port), VERDICT_WORKER_INLINE: '0' });
    const base = `http://127.0.0.1:${port}`;
    let up = false;
    for (let i = 0; i < 200 && !up; i++) {
      up = (await fetch(`${base}/health`).catch(() => null)) !== null;
      if (!up) await new Promise((r) => setTimeout(r, 100));
    }
    const res = await postWebhook(base, 'pull_request', example('pull_request', 'opened'));
    expect(res.status).toBe(202);
    await new Promise((r) => setTimeout(r, 1500));
    const { openStore } = await import('../../src/store/index.js');
    const { randomId, systemClock } = await import('../../src/clock.js');
    const store = await openStore(
      { client: 'sqlite', filename: env.VERDICT_DB_PATH },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 },
    );
    try {
      expect((await store.deliveries.get(res.deliveryId))?.status).toBe('queued'); // no inline worker
      const worker = start(env, 'worker');
      let delivery = null;
      for (let i = 0; i < 200; i++) {
        delivery = await store.deliveries.get(res.deliveryId);
        if (delivery?.status === 'processed') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(delivery).toMatchObject({ status: 'processed', outcome: 'enqueued' });
      // The worker's review lane takes the run at once (woken by the webhook lane); the example has no
      // installation, so the review itself cannot read the pull request: the run exists, queued or ended.
      const run = await store.runs.latestForPr('Codertocat/Hello-World', 2);
      expect(run).toMatchObject({ trigger: 'opened' });
      expect(['queued', 'running', 'failed']).toContain(run!.status);
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    } finally {
      await store.close();
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 90_000);

  test('`npm start` itself: a SIGTERM to npm stops the server (no process is left serving)', async () => {
    const port = await freePort();
    const child = spawn('npm', ['start', '--silent'], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        PORT: String(port),
        HOST: '127.0.0.1',
        VERDICT_DB_PATH: join(dir, 'npm.sqlite'),
        GITHUB_WEBHOOK_SECRET: TEST_SECRET,
        APP_ID: '',
        PRIVATE_KEY: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let serverPid: number | undefined;
    for (let i = 0; i < 600 && serverPid === undefined; i++) {
      serverPid = out
        .split('\n')
        .map((line) => (line.startsWith('{') ? (JSON.parse(line) as { event?: string; pid?: number }) : {}))
        .find((entry) => entry.event === 'server-started')?.pid;
      if (serverPid === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(serverPid).toEqual(expect.any(Number));
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    child.kill('SIGTERM');
    await exited;
    for (let i = 0; i < 100 && alive(serverPid!); i++) await new Promise((r) => setTimeout(r, 100));
    const left = alive(serverPid!);
    if (left) process.kill(serverPid!, 'SIGKILL');
    expect(left).toBe(false);
    expect(out).toContain('"event":"shutdown"');
  }, 90_000);

  test('a bad variable stops start-up with one line naming it and exit code 1', async () => {
    const proc = start({ PORT: 'not-a-port', VERDICT_DB_PATH: join(dir, 'x.sqlite') });
    expect(await proc.exited).toBe(1);
    expect(proc.output().trim()).toBe('Invalid configuration: PORT must be an integer (got "not-a-port")');
    // Provider selection is part of the configuration: a bad provider stops start-up the same way.
    const provider = start({ VERDICT_RUNNER_PROVIDER: 'gateway', VERDICT_DB_PATH: join(dir, 'x.sqlite') });
    expect(await provider.exited).toBe(1);
    expect(provider.output().trim()).toBe(
      'Invalid configuration: VERDICT_RUNNER_PROVIDER must be one of openrouter, openai, anthropic, codex (got "gateway"; use "openrouter")',
    );
  }, 60_000);
});
