import { generateKeyPairSync } from 'node:crypto';
import { jest } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { runCli } from '../../src/cli/main.js';
import { randomId, systemClock } from '../../src/clock.js';
import { loadConfig, type ProcessEnv } from '../../src/config/index.js';
import { logStartupChecks, runChecks, runDoctor, type CheckResult } from '../../src/doctor/index.js';
import { openStore } from '../../src/store/index.js';
import { migrationNames } from '../../src/store/migrations/index.js';
import { githubApp, openaiModels, validAppJwt } from '../helpers/api-bodies.js';

/**
 * `verdict doctor` whole: the store check on real SQLite files, the start-up log, and the CLI command
 * against a local fake GitHub (GHE_HOST) and a local fake OpenAI-compatible API.
 */

let dir: string;
let bin: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verdict-doctor-'));
  bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'codex'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(bin, 'codex'), 0o755);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const byCheck = (results: CheckResult[]) => Object.fromEntries(results.map((r) => [r.check, r]));

async function migratedStore(file: string): Promise<void> {
  const store = await openStore(
    { client: 'sqlite', filename: file },
    { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 },
  );
  await store.close();
}

describe('doctor: the store check', () => {
  const storeOf = async (env: ProcessEnv) =>
    byCheck(await runDoctor({ env: { PATH: bin, ...env }, offline: true })).store!;

  test('no file yet is a warning (npm start creates it); a migrated store is ok', async () => {
    const file = join(dir, 'verdict.sqlite');
    expect(await storeOf({ VERDICT_DB_PATH: file })).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^no store at .*verdict\.sqlite yet: npm start creates and migrates it/),
    });
    await migratedStore(file);
    expect(await storeOf({ VERDICT_DB_PATH: file })).toEqual({
      check: 'store',
      status: 'ok',
      detail: `SQLite ${file} opens and is migrated (${migrationNames.length} migrations)`,
    });
  });

  test('an empty database is a warning; one migrated by a newer Verdict fails; one that cannot open fails', async () => {
    const empty = join(dir, 'empty.sqlite');
    writeFileSync(empty, '');
    expect(await storeOf({ VERDICT_DB_PATH: empty })).toMatchObject({
      status: 'warn',
      detail: `SQLite ${empty} opens but is empty: npm start migrates it`,
    });
    const newer = join(dir, 'newer.sqlite');
    await migratedStore(newer);
    const store = await openStore(
      { client: 'sqlite', filename: newer },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 },
    );
    await store.db
      .knex('knex_migrations')
      .insert({ name: '021-from-the-future', batch: 9, migration_time: new Date() });
    await store.close();
    const future = await storeOf({ VERDICT_DB_PATH: newer });
    expect(future.status).toBe('fail');
    expect(future.detail).toContain('migrated by a newer Verdict');
    expect(future.detail).toContain('021-from-the-future');
    // A directory where the database file should be: the failure is the check's line, and knex's own
    // connection error is not printed besides it.
    const printed = jest.spyOn(console, 'log');
    try {
      const notAFile = await storeOf({ VERDICT_DB_PATH: bin });
      expect(notAFile.status).toBe('fail');
      expect(notAFile.detail).toMatch(/^cannot open SQLite .*: .* \(VERDICT_DB_PATH\)$/);
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
  });

  test('an open store that cannot be read (start-up gives its connection) fails the check', async () => {
    const file = join(dir, 'verdict.sqlite');
    await migratedStore(file);
    const store = await openStore(
      { client: 'sqlite', filename: file },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 },
    );
    await store.close();
    const [result] = await runChecks(loadConfig({ VERDICT_DB_PATH: file }), {
      env: {},
      offline: true,
      knex: store.db.knex,
    });
    expect(result).toMatchObject({ check: 'store', status: 'fail' });
    expect(result!.detail).toMatch(new RegExp(`^SQLite ${file} cannot be read: `));
  });
});

describe('doctor: the configuration', () => {
  test('a value npm start would refuse is the one failing line', async () => {
    expect(await runDoctor({ env: { VERDICT_RUNNER_PROVIDER: 'gateway' } })).toEqual([
      {
        check: 'config',
        status: 'fail',
        detail:
          'Invalid configuration: VERDICT_RUNNER_PROVIDER must be one of openrouter, openai, anthropic, codex (got "gateway"; use "openrouter") (npm start refuses to start)',
      },
    ]);
  });

  test('a PRIVATE_KEY_PATH that cannot be read fails the configuration, naming it', async () => {
    const [result] = await runDoctor({ env: { APP_ID: '1', PRIVATE_KEY_PATH: join(dir, 'missing.pem') } });
    expect(result).toMatchObject({ check: 'config', status: 'fail' });
    expect(result!.detail).toMatch(/^Invalid configuration: PRIVATE_KEY_PATH cannot be read \(ENOENT/);
  });
});

describe('npm start: the start-up checks', () => {
  test('logged as warnings without the network, naming the dashboard tokens it lacks; the store is the open one', async () => {
    const file = join(dir, 'verdict.sqlite');
    await migratedStore(file);
    const env = {
      VERDICT_DB_PATH: file,
      VERDICT_OPERATOR_UI_ENABLED: '1',
      VERDICT_OPERATOR_UI_TOKEN: 'ui',
      GITHUB_WEBHOOK_SECRET: 's',
      // A provider with a key: start-up does not ask it (no interceptor, no network).
      VERDICT_RUNNER_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-x',
      VERDICT_RUNNER_MODEL: 'gpt-4o',
    };
    const lines: Array<Record<string, any>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const store = await openStore(
      { client: 'sqlite', filename: file },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 },
    );
    try {
      const results = await logStartupChecks(loadConfig(env), {
        log,
        env,
        knex: store.db.knex,
        serverUrl: 'http://localhost:9999',
      });
      expect(results.map((r) => [r.check, r.status])).toEqual([
        ['store', 'ok'],
        ['webhook-secret', 'ok'],
        ['github-app', 'warn'],
        ['provider', 'ok'],
        ['dashboard', 'fail'],
        // No executor on this environment's PATH, and the switch unset: validation is off, and says so.
        ['validation', 'warn'],
      ]);
    } finally {
      await store.close();
    }
    const checks = lines.filter((l) => l.event === 'startup-check');
    expect(checks.map((l) => [l.level, l.check])).toEqual([
      [30, 'store'],
      [30, 'webhook-secret'],
      [40, 'github-app'],
      [30, 'provider'],
      [40, 'dashboard'],
      [40, 'validation'],
    ]);
    const dashboard = checks.find((l) => l.check === 'dashboard')!.msg as string;
    expect(dashboard).toMatch(/^fail dashboard: on, but /);
    for (const token of [
      'VERDICT_OPERATOR_READ_TOKEN',
      'VERDICT_OPERATOR_COMMAND_TOKEN',
      'VERDICT_OPERATOR_ADMIN_TOKEN',
    ]) {
      expect(dashboard).toContain(token);
    }
    expect(checks.find((l) => l.check === 'provider')!.msg).toContain(
      'openai not asked: start-up does not call out; npx verdict doctor does',
    );
    expect(checks.find((l) => l.check === 'github-app')!.msg).toContain('http://localhost:9999/');
    expect(lines.at(-1)).toMatchObject({ event: 'startup-checks', attention: 3, level: 40 });
  });

  test('a check that throws is logged as a warning and start-up goes on', async () => {
    const lines: Array<Record<string, any>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const config = loadConfig({});
    // A provider no check knows (the configuration never gives one): its check throws.
    const broken = {
      ...config,
      review: {
        ...config.review,
        providers: {
          ...config.review.providers,
          primary: { ...config.review.providers.primary, provider: 'nope' as 'openai' },
        },
      },
    };
    const store = await openStore(
      { client: 'sqlite', filename: ':memory:' },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 },
    );
    try {
      expect(
        await logStartupChecks(broken, {
          log,
          env: {},
          knex: store.db.knex,
          serverUrl: 'http://localhost:1',
        }),
      ).toEqual([]);
    } finally {
      await store.close();
    }
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        event: 'startup-checks',
        msg: 'the start-up checks could not run',
      }),
    ]);
  });
});

/** A local HTTP server answering with `handler`; records each request's method, path and headers. */
async function fakeApi(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
};

describe('verdict doctor (the CLI command)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });

  async function doctor(args: string[], env: Record<string, string>) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['doctor', ...args], {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      env,
      isTty: false,
    });
    return { code, out, err };
  }

  test('online: GitHub names the App, the provider lists the model; exit 0 with warnings only', async () => {
    const github = await fakeApi((req, res) => {
      const auth = req.headers.authorization ?? '';
      if (req.url === '/api/v3/app' && validAppJwt(auth, publicKey, 4242, Date.now() / 1000)) {
        return json(res, 200, githubApp({ id: 4242, slug: 'verdict-local' }));
      }
      json(res, 401, { message: 'A JSON web token could not be decoded' });
    });
    const openai = await fakeApi((req, res) =>
      req.url === '/v1/models' && req.headers.authorization === 'Bearer sk-local'
        ? json(res, 200, openaiModels(['gpt-4o-mini']))
        : json(res, 404, { error: { message: 'not found' } }),
    );
    const keyFile = join(dir, 'app.pem');
    writeFileSync(keyFile, privateKey);
    const db = join(dir, 'verdict.sqlite');
    await migratedStore(db);
    try {
      const result = await doctor(['--db', db], {
        PATH: bin,
        GITHUB_WEBHOOK_SECRET: 'secret',
        APP_ID: '4242',
        PRIVATE_KEY_PATH: keyFile,
        GHE_HOST: github.url,
        GHE_PROTOCOL: 'http',
        VERDICT_RUNNER_PROVIDER: 'openai',
        OPENAI_API_KEY: 'sk-local',
        VERDICT_RUNNER_MODEL: 'gpt-4o-mini',
        VERDICT_OPENAI_BASE_URL: `http://${openai.url}/v1`,
        VERDICT_OPERATOR_UI_ENABLED: '1',
        VERDICT_OPERATOR_UI_TOKEN: 'ui',
        VERDICT_OPERATOR_READ_TOKEN: 'r',
      });
      expect(result.err).toEqual([]);
      expect(result.code).toBe(0);
      for (const line of result.out) expect(line).toMatch(/^(ok|warn|fail) [a-z-]+: \S/);
      expect(result.out.map((l) => l.split(':')[0])).toEqual([
        'ok config',
        'ok store',
        'ok webhook-secret',
        'ok github-app',
        'ok provider',
        'warn dashboard',
        // No bwrap on PATH and the switch unset: validation is off (a warning, not a failure).
        'warn validation',
      ]);
      expect(result.out[3]).toBe(
        `ok github-app: GET http://${github.url}/api/v3/app answered: the App is verdict-local (id 4242, "Verdict (acme)", owned by acme)`,
      );
      expect(result.out[4]).toContain('model gpt-4o-mini is listed');
      expect(github.hits).toEqual(['GET /api/v3/app']);
      expect(openai.hits).toEqual(['GET /v1/models']);
      // --offline: nothing is asked, and --json gives the same checks.
      const offline = await doctor(['--db', db, '--offline', '--json'], {
        PATH: bin,
        GITHUB_WEBHOOK_SECRET: 'secret',
        APP_ID: '4242',
        PRIVATE_KEY_PATH: keyFile,
        GHE_HOST: github.url,
        GHE_PROTOCOL: 'http',
      });
      expect(offline.code).toBe(0);
      const parsed = JSON.parse(offline.out.join('\n'));
      expect(parsed.ok).toBe(true);
      expect(parsed.checks.find((c: CheckResult) => c.check === 'github-app')).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining('GitHub not asked: --offline'),
      });
      expect(github.hits).toHaveLength(1);
    } finally {
      github.server.close();
      openai.server.close();
    }
  });

  test('a failing check exits 1; doctor takes no arguments; --help answers', async () => {
    const failing = await doctor(['--offline'], {
      PATH: bin,
      VERDICT_DB_PATH: join(dir, 'none.sqlite'),
      APP_ID: '1',
      PRIVATE_KEY: 'not-a-key',
    });
    expect(failing.code).toBe(1);
    expect(failing.out).toContain(
      "fail webhook-secret: not set: every webhook is refused with 401 invalid_signature; set GITHUB_WEBHOOK_SECRET (or Probot's WEBHOOK_SECRET) to the App's webhook secret",
    );
    expect(failing.out.find((l) => l.startsWith('fail github-app:'))).toMatch(
      /^fail github-app: PRIVATE_KEY is not a PEM private key .*set PRIVATE_KEY_PATH/,
    );
    expect(await doctor(['now'], {})).toMatchObject({ code: 1, err: ['verdict doctor: takes no arguments'] });
    const help = await doctor(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.out[0]).toMatch(/^Usage: verdict doctor \[--offline\]/);
  });
});
