import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { loadConfig, type ProcessEnv } from '../../src/config/index.js';
import {
  dashboardCheck,
  githubAppCheck,
  validationCheck,
  webhookSecretCheck,
  worst,
  type CheckDeps,
} from '../../src/doctor/checks.js';
import { providerCheck } from '../../src/doctor/provider-check.js';
import { formatCheck } from '../../src/doctor/index.js';
import {
  ANTHROPIC_BAD_KEY,
  anthropicModels,
  GITHUB_BAD_JWT,
  githubApp,
  OPENAI_BAD_KEY,
  openaiModels,
  openrouterModels,
  validAppJwt,
} from '../helpers/api-bodies.js';

/** The checks of `verdict doctor`, one by one, with GitHub and the providers as nock interceptors. */

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const { privateKey: PEM, publicKey: PUBLIC } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

let bin: string;
let built: string;
beforeAll(() => {
  // A directory with executables named codex and bwrap (what a PATH lookup finds).
  bin = mkdtempSync(join(tmpdir(), 'verdict-doctor-bin-'));
  for (const name of ['codex', 'bwrap']) {
    writeFileSync(join(bin, name), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, name), 0o755);
  }
  // A built dashboard (web/dist): its index.html.
  built = join(bin, 'dist');
  mkdirSync(built);
  writeFileSync(join(built, 'index.html'), '<!doctype html><div id="app"></div>');
});
afterAll(() => rmSync(bin, { recursive: true, force: true }));

const EMPTY_PATH = '/nonexistent-verdict-path';

function deps(env: ProcessEnv, overrides: Partial<CheckDeps> = {}): CheckDeps {
  return {
    env,
    offline: false,
    fetch: globalThis.fetch,
    now: () => NOW,
    timeoutMs: 5000,
    offlineNote: '--offline',
    serverUrl: 'http://localhost:8787',
    e2bSdkAvailable: async () => false,
    uiDist: built,
    ...overrides,
  };
}

const run = <T>(check: (config: ReturnType<typeof loadConfig>, d: CheckDeps) => T, env: ProcessEnv, o = {}) =>
  check(loadConfig({ PATH: EMPTY_PATH, ...env }), deps({ PATH: EMPTY_PATH, ...env }, o));

describe('doctor line format', () => {
  test('one line "<status> <check>: <detail>"; the worst status wins', () => {
    expect(formatCheck({ check: 'store', status: 'warn', detail: 'no store yet' })).toBe(
      'warn store: no store yet',
    );
    expect(worst(['ok', 'warn', 'ok'])).toBe('warn');
    expect(worst(['ok', 'fail', 'warn'])).toBe('fail');
    expect(worst(['ok'])).toBe('ok');
  });
});

describe('webhook-secret', () => {
  test('unset fails naming GITHUB_WEBHOOK_SECRET; WEBHOOK_SECRET alone is accepted and named', () => {
    const missing = run(webhookSecretCheck, {});
    expect(missing.status).toBe('fail');
    expect(missing.detail).toContain('set GITHUB_WEBHOOK_SECRET');
    expect(run(webhookSecretCheck, { WEBHOOK_SECRET: 's' })).toEqual({
      check: 'webhook-secret',
      status: 'ok',
      detail: 'WEBHOOK_SECRET is set; webhooks are verified with it',
    });
    expect(run(webhookSecretCheck, { GITHUB_WEBHOOK_SECRET: 's', WEBHOOK_SECRET: 't' }).detail).toMatch(
      /^GITHUB_WEBHOOK_SECRET is set/,
    );
  });
});

describe('github-app', () => {
  test('no credentials at all is a warning: shadow mode, and how to register the App', async () => {
    const result = await run(githubAppCheck, {});
    expect(result.status).toBe('warn');
    expect(result.detail).toContain('shadow mode');
    expect(result.detail).toContain('http://localhost:8787/');
    expect(result.detail).toContain('APP_ID and PRIVATE_KEY_PATH');
  });

  test('PRIVATE_KEY=not-a-key fails saying what to set; so do a missing half and a non-RSA key', async () => {
    const bad = await run(githubAppCheck, { APP_ID: '123456', PRIVATE_KEY: 'not-a-key' });
    expect(bad.status).toBe('fail');
    expect(bad.detail).toMatch(
      /^PRIVATE_KEY is not a PEM private key \(.+\): set PRIVATE_KEY_PATH to the \.pem file/,
    );
    const noKey = await run(githubAppCheck, { APP_ID: '123456' });
    expect(noKey).toMatchObject({ status: 'fail' });
    expect(noKey.detail).toMatch(/^APP_ID is set but no private key: set PRIVATE_KEY_PATH/);
    const noId = await run(githubAppCheck, { PRIVATE_KEY: PEM });
    expect(noId).toMatchObject({ status: 'fail' });
    expect(noId.detail).toContain('set APP_ID');
    const ec = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    }).privateKey;
    const notRsa = await run(githubAppCheck, { APP_ID: '1', PRIVATE_KEY: ec });
    expect(notRsa.status).toBe('fail');
    expect(notRsa.detail).toMatch(/^PRIVATE_KEY is a ec key; a GitHub App's key is RSA/);
  });

  test('a key from PRIVATE_KEY_PATH that is not a key names that file', async () => {
    const file = join(bin, 'not-a-key.pem');
    writeFileSync(file, 'hello');
    const result = await run(githubAppCheck, { APP_ID: '1', PRIVATE_KEY_PATH: file });
    expect(result.status).toBe('fail');
    expect(result.detail).toMatch(new RegExp(`^PRIVATE_KEY_PATH \\(${file}\\) is not a PEM private key`));
  });

  test('--offline: the credentials parse and GitHub is not asked', async () => {
    const result = await run(githubAppCheck, { APP_ID: '123456', PRIVATE_KEY: PEM }, { offline: true });
    expect(result).toEqual({
      check: 'github-app',
      status: 'ok',
      detail: 'App 123456 with an RSA private key from PRIVATE_KEY (GitHub not asked: --offline)',
    });
  });

  test('online: GET /app with the App JWT answers the App, whose slug is printed', async () => {
    const scope = nock('https://api.github.com')
      .get('/app')
      .matchHeader('authorization', (v) => validAppJwt(v, PUBLIC, 123456, NOW / 1000))
      .matchHeader('accept', 'application/vnd.github+json')
      .reply(200, githubApp());
    const result = await run(githubAppCheck, { APP_ID: '123456', PRIVATE_KEY: PEM });
    expect(result).toEqual({
      check: 'github-app',
      status: 'ok',
      detail:
        'GET https://api.github.com/app answered: the App is verdict-acme (id 123456, "Verdict (acme)", owned by acme)',
    });
    scope.done();
  });

  test('GHE_HOST and GHE_PROTOCOL choose the API, as Probot does; escaped newlines in PRIVATE_KEY work', async () => {
    nock('http://ghe.acme.example')
      .get('/api/v3/app')
      .matchHeader('authorization', (v) => validAppJwt(v, PUBLIC, 7, NOW / 1000))
      .reply(200, githubApp({ id: 7, slug: 'verdict-ghe' }));
    const result = await run(githubAppCheck, {
      APP_ID: '7',
      PRIVATE_KEY: PEM.replace(/\n/g, '\\n'),
      GHE_HOST: 'ghe.acme.example',
      GHE_PROTOCOL: 'http',
    });
    expect(result.status).toBe('ok');
    expect(result.detail).toContain('the App is verdict-ghe (id 7');
  });

  test('GitHub refusing the JWT fails with its message; an unreachable GitHub fails naming the URL', async () => {
    nock('https://api.github.com').get('/app').reply(401, GITHUB_BAD_JWT);
    const refused = await run(githubAppCheck, { APP_ID: '99', PRIVATE_KEY: PEM });
    expect(refused.status).toBe('fail');
    expect(refused.detail).toBe(
      "GitHub refused the App's JWT at GET https://api.github.com/app (401: A JSON web token could not be decoded): check that APP_ID 99 is the App whose key PRIVATE_KEY holds, and this machine's clock",
    );
    nock('https://api.github.com').get('/app').replyWithError({ code: 'ECONNREFUSED' });
    const down = await run(githubAppCheck, { APP_ID: '99', PRIVATE_KEY: PEM });
    expect(down.status).toBe('fail');
    expect(down.detail).toMatch(/^cannot reach https:\/\/api\.github\.com\/app \(/);
  });
});

describe('provider', () => {
  const primary = (config: ReturnType<typeof loadConfig>, d: CheckDeps) =>
    providerCheck(config, config.review.providers.primary, 'provider', d);

  test('the default codex without its binary fails saying what to set; with it on PATH it is ok', async () => {
    const missing = await run(primary, {});
    expect(missing.status).toBe('fail');
    expect(missing.detail).toContain('codex: the binary "codex" is not on PATH');
    expect(missing.detail).toContain('VERDICT_RUNNER_BIN');
    expect(missing.detail).toContain('VERDICT_RUNNER_PROVIDER');
    const found = await run(primary, { PATH: bin });
    expect(found).toEqual({
      check: 'provider',
      status: 'ok',
      detail: `codex: ${join(bin, 'codex')} (model gpt-5-codex; its login is checked at the first review)`,
    });
    const byPath = await run(primary, { VERDICT_RUNNER_BIN: join(bin, 'nope') });
    expect(byPath.detail).toContain(`"${join(bin, 'nope')}" is not an executable file`);
  });

  test('an HTTP provider without a key or a model fails naming the variables', async () => {
    const none = await run(primary, { VERDICT_RUNNER_PROVIDER: 'openai' });
    expect(none).toEqual({
      check: 'provider',
      status: 'fail',
      detail:
        'openai needs an API key: set OPENAI_API_KEY (or VERDICT_OPENAI_API_KEY), and a model: set VERDICT_RUNNER_MODEL (openai has no default)',
    });
    const offline = await run(
      primary,
      { VERDICT_RUNNER_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'k', VERDICT_RUNNER_MODEL: 'claude-x' },
      { offline: true },
    );
    expect(offline).toMatchObject({ status: 'ok', detail: expect.stringContaining('anthropic not asked') });
  });

  test('openai answers its models list with the key; a model it does not list is a warning', async () => {
    const env = {
      VERDICT_RUNNER_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-good',
      VERDICT_RUNNER_MODEL: 'gpt-4o-mini',
    };
    nock('https://api.openai.com')
      .get('/v1/models')
      .matchHeader('authorization', 'Bearer sk-good')
      .reply(200, openaiModels(['gpt-4o', 'gpt-4o-mini']));
    expect(await run(primary, env)).toEqual({
      check: 'provider',
      status: 'ok',
      detail: 'openai answered GET https://api.openai.com/v1/models (2 models); model gpt-4o-mini is listed',
    });
    nock('https://api.openai.com')
      .get('/v1/models')
      .reply(200, openaiModels(['gpt-4o']));
    const unlisted = await run(primary, env);
    expect(unlisted.status).toBe('warn');
    expect(unlisted.detail).toContain('model gpt-4o-mini is not among them: check VERDICT_RUNNER_MODEL');
  });

  test('a local OpenAI-compatible server needs no key: asked without an Authorization header', async () => {
    const env = {
      VERDICT_RUNNER_PROVIDER: 'openai',
      VERDICT_OPENAI_BASE_URL: 'http://localhost:11434/v1',
      VERDICT_RUNNER_MODEL: 'qwen2.5-coder',
    };
    nock('http://localhost:11434', { badheaders: ['authorization'] })
      .get('/v1/models')
      .reply(200, openaiModels(['qwen2.5-coder']));
    expect(await run(primary, env)).toMatchObject({ status: 'ok' });
    // At OpenAI's own API a missing key still fails.
    const { VERDICT_OPENAI_BASE_URL: _local, ...official } = env;
    expect(await run(primary, official)).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('an API key: set OPENAI_API_KEY'),
    });
  });

  test('a refused key fails with the provider’s message and the variable to set', async () => {
    nock('https://api.openai.com').get('/v1/models').reply(401, OPENAI_BAD_KEY);
    const result = await run(primary, {
      VERDICT_RUNNER_PROVIDER: 'openai',
      VERDICT_OPENAI_API_KEY: 'sk-wrong',
      VERDICT_RUNNER_MODEL: 'gpt-4o',
    });
    expect(result.status).toBe('fail');
    expect(result.detail).toMatch(
      /^openai refused the API key at GET https:\/\/api\.openai\.com\/v1\/models \(401: Incorrect API key provided: sk-wrong\..*\): set a valid OPENAI_API_KEY \(or VERDICT_OPENAI_API_KEY\)$/,
    );
  });

  test('anthropic is asked with x-api-key and anthropic-version', async () => {
    const env = {
      VERDICT_RUNNER_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'sk-ant-good',
      VERDICT_RUNNER_MODEL: 'claude-sonnet-4-20250514',
      VERDICT_ANTHROPIC_VERSION: '2023-06-01',
    };
    nock('https://api.anthropic.com')
      .get('/v1/models')
      .query({ limit: '1000' })
      .matchHeader('x-api-key', 'sk-ant-good')
      .matchHeader('anthropic-version', '2023-06-01')
      .reply(200, anthropicModels(['claude-sonnet-4-20250514', 'claude-3-5-haiku-20241022']));
    const result = await run(primary, env);
    expect(result.status).toBe('ok');
    expect(result.detail).toContain('model claude-sonnet-4-20250514 is listed');
    nock('https://api.anthropic.com').get('/v1/models').query(true).reply(401, ANTHROPIC_BAD_KEY);
    const refused = await run(primary, env);
    expect(refused).toMatchObject({ status: 'fail' });
    expect(refused.detail).toContain('(401: invalid x-api-key): set a valid ANTHROPIC_API_KEY');
  });

  test('openrouter with the free-only guard: a paid model fails as the guard would refuse it', async () => {
    const env = {
      VERDICT_RUNNER_PROVIDER: 'openrouter',
      OPENROUTER_API_KEY: 'or-key',
      VERDICT_RUNNER_MODEL: 'openai/gpt-4o',
    };
    const models = openrouterModels([
      { id: 'openai/gpt-4o', free: false },
      { id: 'meta-llama/llama-3.3-70b-instruct:free', free: true },
    ]);
    nock('https://openrouter.ai')
      .get('/api/v1/models')
      .matchHeader('authorization', 'Bearer or-key')
      .reply(200, models);
    const paid = await run(primary, env);
    expect(paid.status).toBe('fail');
    expect(paid.detail).toContain('model openai/gpt-4o is not free');
    expect(paid.detail).toContain('VERDICT_OPENROUTER_REQUIRE_FREE=0');
    nock('https://openrouter.ai').get('/api/v1/models').reply(200, models);
    const free = await run(primary, {
      ...env,
      VERDICT_RUNNER_MODEL: 'meta-llama/llama-3.3-70b-instruct:free',
    });
    expect(free.detail).toContain('model meta-llama/llama-3.3-70b-instruct:free is listed and free');
  });

  test('the shadow provider is checked too, but its problems are only warnings', async () => {
    const config = loadConfig({
      PATH: bin,
      VERDICT_RUNNER_SHADOW_MODEL: 'gpt-4o',
      VERDICT_RUNNER_SHADOW_PROVIDER: 'openai',
    });
    const result = await providerCheck(config, config.review.providers.shadow!, 'shadow-provider', deps({}));
    expect(result).toMatchObject({ check: 'shadow-provider', status: 'warn' });
    expect(result.detail).toContain('set OPENAI_API_KEY');
  });
});

describe('dashboard', () => {
  const check = (env: ProcessEnv, uiDist = built) => dashboardCheck(loadConfig(env), { uiDist });

  test('off is ok; on without backend tokens names each missing token and what it opens', () => {
    expect(check({}).status).toBe('ok');
    const bare = check({ VERDICT_OPERATOR_UI_ENABLED: '1', VERDICT_OPERATOR_UI_TOKEN: 'ui' });
    expect(bare.status).toBe('fail');
    expect(bare.detail).toContain('VERDICT_OPERATOR_READ_TOKEN is not set: every view answers 503');
    expect(bare.detail).toContain('VERDICT_OPERATOR_COMMAND_TOKEN is not set: requeue, retry-publish');
    expect(bare.detail).toContain('VERDICT_OPERATOR_ADMIN_TOKEN is not set: settings');
    expect(bare.detail).not.toContain('nobody can sign in');
  });

  test('the read token alone: the command and admin tokens are warnings', () => {
    const result = check({
      VERDICT_OPERATOR_UI_ENABLED: '1',
      VERDICT_OPERATOR_UI_TOKEN: 'ui',
      VERDICT_OPERATOR_READ_TOKEN: 'r',
    });
    expect(result.status).toBe('warn');
    expect(result.detail).not.toContain('READ_TOKEN');
    expect(result.detail).toContain('VERDICT_OPERATOR_COMMAND_TOKEN');
    expect(result.detail).toContain('VERDICT_OPERATOR_ADMIN_TOKEN');
  });

  test('every token but no way to sign in fails; GitHub sign-in with allowed logins is one', () => {
    const tokens = {
      VERDICT_OPERATOR_UI_ENABLED: '1',
      VERDICT_OPERATOR_READ_TOKEN: 'r',
      VERDICT_OPERATOR_COMMAND_TOKEN: 'c',
      VERDICT_OPERATOR_ADMIN_TOKEN: 'a',
    };
    const nobody = check(tokens);
    expect(nobody.status).toBe('fail');
    expect(nobody.detail).toContain('nobody can sign in: set VERDICT_OPERATOR_UI_TOKEN');
    expect(
      check({
        ...tokens,
        GITHUB_CLIENT_ID: 'Iv1.x',
        GITHUB_CLIENT_SECRET: 's',
        VERDICT_UI_ALLOWED_LOGINS: 'octocat',
      }),
    ).toEqual({
      check: 'dashboard',
      status: 'ok',
      detail: 'on; the proxy has the read, command and admin tokens; sign-in with the GitHub',
    });
  });

  test('pages that are not built (no web/dist/index.html) are a warning naming the build command', () => {
    const env = {
      VERDICT_OPERATOR_UI_ENABLED: '1',
      VERDICT_OPERATOR_UI_TOKEN: 'ui',
      VERDICT_OPERATOR_READ_TOKEN: 'r',
      VERDICT_OPERATOR_COMMAND_TOKEN: 'c',
      VERDICT_OPERATOR_ADMIN_TOKEN: 'a',
    };
    expect(check(env).status).toBe('ok');
    const unbuilt = join(bin, 'no-dist');
    expect(check(env, unbuilt)).toEqual({
      check: 'dashboard',
      status: 'warn',
      detail: `on, but its pages are not built (${unbuilt}): run npm run build:web`,
    });
  });
});

describe('validation', () => {
  test('switched off is ok; unset without an executor warns; unset with bwrap on PATH is on', async () => {
    expect(await run(validationCheck, { VERDICT_VALIDATION_ENABLED: '0', PATH: bin })).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining('VERDICT_VALIDATION_ENABLED=0'),
    });
    expect(await run(validationCheck, {})).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('no executor is available'),
    });
    const auto = await run(validationCheck, { PATH: bin });
    expect(auto.status).toBe('ok');
    expect(auto.detail).toContain(`bubblewrap (the default executor): ${join(bin, 'bwrap')}`);
  });

  test('on without bwrap on PATH fails saying what to install', async () => {
    const missing = await run(validationCheck, { VERDICT_VALIDATION_ENABLED: '1' });
    expect(missing.status).toBe('fail');
    expect(missing.detail).toContain('bwrap is not on PATH');
    expect(missing.detail).toContain('bubblewrap');
    const found = await run(validationCheck, { VERDICT_VALIDATION_ENABLED: '1', PATH: bin });
    expect(found.status).toBe('ok');
    expect(found.detail).toContain(`bubblewrap (the default executor): ${join(bin, 'bwrap')}`);
    expect(found.detail).toContain('e2b: no E2B_API_KEY');
  });

  test('an e2b key without the SDK, and local allowed but not set up, are warnings', async () => {
    const result = await run(
      validationCheck,
      {
        VERDICT_VALIDATION_ENABLED: '1',
        PATH: bin,
        E2B_API_KEY: 'e2b_x',
        VERDICT_VALIDATION_ALLOW_LOCAL: '1',
      },
      { e2bSdkAvailable: async () => false },
    );
    expect(result.status).toBe('warn');
    expect(result.detail).toContain('the e2b SDK does not load');
    expect(result.detail).toContain('VERDICT_SELF_HOST_VALIDATION=1');
    const sdk = await run(
      validationCheck,
      { VERDICT_VALIDATION_ENABLED: '1', PATH: bin, E2B_API_KEY: 'e2b_x' },
      { e2bSdkAvailable: async () => true },
    );
    expect(sdk).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining('e2b: E2B_API_KEY set, SDK loads'),
    });
  });
});
