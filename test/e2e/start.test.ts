import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { example, postWebhook, TEST_SECRET } from '../helpers/webhooks.js';

const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function start(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(TSX, ['src/main.ts'], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

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
    expect(proc.output()).toContain('shadow mode');
    const res = await postWebhook(base, 'pull_request', example('pull_request', 'opened'));
    expect(res.status).toBe(202);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  }, 60_000);

  test('a bad variable stops start-up with one line naming it and exit code 1', async () => {
    const proc = start({ PORT: 'not-a-port', VERDICT_DB_PATH: join(dir, 'x.sqlite') });
    expect(await proc.exited).toBe(1);
    expect(proc.output().trim()).toBe('Invalid configuration: PORT must be an integer (got "not-a-port")');
  }, 60_000);
});
