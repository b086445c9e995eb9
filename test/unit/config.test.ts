import { ConfigError, loadConfig, lookup } from '../../src/config/index.js';

const noFile = () => {
  throw new Error('ENOENT');
};

describe('config', () => {
  test('defaults', () => {
    const c = loadConfig({}, noFile);
    expect(c).toMatchObject({
      port: 8787,
      host: '0.0.0.0',
      productName: 'Verdict',
      checkName: 'Verdict / review',
      store: { client: 'sqlite', filename: './data/verdict.sqlite' },
      dedupeTtlSeconds: 604800,
      botHandles: ['verdict', 'reviewbot'],
      workerInline: true,
    });
    expect(c.github).toMatchObject({
      hasCredentials: false,
      webhookSecret: null,
      baseUrl: 'https://api.github.com',
      webUrl: 'https://github.com',
    });
  });

  test('nullish prefix fallback: legacy only when the canonical variable is unset', () => {
    expect(lookup({ REVIEWBOT_DB_PATH: '/legacy' }, 'VERDICT_DB_PATH')).toEqual({
      variable: 'REVIEWBOT_DB_PATH',
      raw: '/legacy',
    });
    expect(lookup({ VERDICT_DB_PATH: '/new', REVIEWBOT_DB_PATH: '/legacy' }, 'VERDICT_DB_PATH').raw).toBe(
      '/new',
    );
    expect(lookup({ VERDICT_DB_PATH: '', REVIEWBOT_DB_PATH: '/legacy' }, 'VERDICT_DB_PATH')).toEqual({
      variable: 'VERDICT_DB_PATH',
      raw: '',
    });
    // An empty canonical value means the default, not the legacy value.
    expect(loadConfig({ VERDICT_DB_PATH: '', REVIEWBOT_DB_PATH: '/legacy' }, noFile).store).toEqual({
      client: 'sqlite',
      filename: './data/verdict.sqlite',
    });
    expect(loadConfig({ REVIEWBOT_PRODUCT_NAME: 'Legacy' }, noFile).checkName).toBe('Legacy / review');
  });

  test('DATABASE_URL selects PostgreSQL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }, noFile).store).toMatchObject({
      client: 'pg',
      connectionString: 'postgres://u@h:5432/db',
    });
  });

  test('GitHub credentials, secret precedence and GHES base URL', () => {
    const c = loadConfig(
      {
        APP_ID: '42',
        PRIVATE_KEY_PATH: '/key.pem',
        WEBHOOK_SECRET: 'probot',
        GITHUB_WEBHOOK_SECRET: 'ours',
        GHE_HOST: '127.0.0.1:9999',
        GHE_PROTOCOL: 'http',
      },
      () => 'PEM',
    );
    expect(c.github).toMatchObject({
      appId: '42',
      privateKey: 'PEM',
      hasCredentials: true,
      webhookSecret: 'ours',
      baseUrl: 'http://127.0.0.1:9999/api/v3',
      webUrl: 'http://127.0.0.1:9999',
    });
    expect(loadConfig({ WEBHOOK_SECRET: 'probot' }, noFile).github.webhookSecret).toBe('probot');
    expect(loadConfig({ PRIVATE_KEY: 'a\\nb' }, noFile).github.privateKey).toBe('a\nb');
  });

  test('VERDICT_WORKER_INLINE=0 turns the inline worker off; handles are normalised', () => {
    expect(loadConfig({ VERDICT_WORKER_INLINE: '0' }, noFile).workerInline).toBe(false);
    expect(loadConfig({ VERDICT_BOT_HANDLES: '@Judge,ref' }, noFile).botHandles).toEqual(['judge', 'ref']);
  });

  test('one boolean rule for every flag: 1/true on, 0/false off, blank the default, anything else refused', () => {
    const flags = (env: Record<string, string>) => {
      const c = loadConfig(env, noFile);
      return [
        c.workerInline,
        c.scheduler.enabled,
        c.competitorTriggersReview,
        c.review.publishOnRunnerFailure,
      ];
    };
    expect(flags({})).toEqual([true, true, false, false]);
    const all = (value: string) => ({
      VERDICT_WORKER_INLINE: value,
      VERDICT_SCHEDULER: value,
      VERDICT_COMPETITOR_TRIGGERS_REVIEW: value,
      VERDICT_PUBLISH_ON_RUNNER_FAILURE: value,
    });
    for (const on of ['1', 'true', 'TRUE', ' true '])
      expect(flags(all(on))).toEqual([true, true, true, true]);
    for (const off of ['0', 'false', 'False']) expect(flags(all(off))).toEqual([false, false, false, false]);
    expect(flags(all(''))).toEqual([true, true, false, false]);
    for (const name of [
      'VERDICT_COMPETITOR_TRIGGERS_REVIEW',
      'VERDICT_PUBLISH_ON_RUNNER_FAILURE',
      'VERDICT_SCHEDULER',
    ]) {
      expect(() => loadConfig({ [name]: 'yes' }, noFile)).toThrow(
        new RegExp(`^Invalid configuration: ${name} must be 0, 1, true or false$`),
      );
    }
  });

  test.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DEDUPE_TTL_SECONDS: '0' }, 'DEDUPE_TTL_SECONDS'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ APP_ID: 'abc' }, 'APP_ID'],
    [{ VERDICT_WORKER_INLINE: 'maybe' }, 'VERDICT_WORKER_INLINE'],
    [{ REVIEWBOT_WORKER_INLINE: 'maybe' }, 'REVIEWBOT_WORKER_INLINE'],
    [{ GHE_PROTOCOL: 'ftp' }, 'GHE_PROTOCOL'],
    [{ PRIVATE_KEY_PATH: '/missing.pem' }, 'PRIVATE_KEY_PATH'],
  ])('%j stops start-up with one line naming %s', (env, variable) => {
    let error: unknown;
    try {
      loadConfig(env, noFile);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as Error).message).toMatch(new RegExp(`^Invalid configuration: ${variable} `));
    expect((error as Error).message).not.toContain('\n');
  });
});

describe('VERDICT_OPERATOR_CACHE_MS', () => {
  test('defaults to 1000, takes 0 to 15000', () => {
    expect(loadConfig({}).operatorCacheMs).toBe(1000);
    expect(loadConfig({ VERDICT_OPERATOR_CACHE_MS: '0' }).operatorCacheMs).toBe(0);
    expect(loadConfig({ REVIEWBOT_OPERATOR_CACHE_MS: '15000' }).operatorCacheMs).toBe(15000);
  });
});

describe('scheduler variables', () => {
  test('defaults: scheduler on, live authority, 30-day retention, no alert delivery', () => {
    expect(loadConfig({}).scheduler).toEqual({
      enabled: true,
      authority: 'live',
      deliveryRetentionDays: 30,
      alertUrl: null,
      telegramBotToken: null,
      telegramApiUrl: 'https://api.telegram.org',
    });
    expect(
      loadConfig({
        VERDICT_SCHEDULER: '0',
        REVIEWBOT_CRON_AUTHORITY: 'shadow',
        VERDICT_DELIVERY_RETENTION_DAYS: '0',
        VERDICT_WATCHDOG_ALERT_URL: 'https://alerts.example.com/hook',
        VERDICT_TELEGRAM_BOT_TOKEN: ' 123:abc ',
        VERDICT_TELEGRAM_API_URL: 'http://127.0.0.1:9/',
      }).scheduler,
    ).toEqual({
      enabled: false,
      authority: 'shadow',
      deliveryRetentionDays: 0,
      alertUrl: 'https://alerts.example.com/hook',
      telegramBotToken: '123:abc',
      telegramApiUrl: 'http://127.0.0.1:9',
    });
  });
});

describe('validation install variables', () => {
  test('defaults: install off, the public npm registry', () => {
    expect(loadConfig({}).validation).toMatchObject({
      install: 'off',
      registry: 'https://registry.npmjs.org/',
    });
  });

  test('registry mode; the registry URL keeps exactly one trailing slash', () => {
    for (const [raw, want] of [
      ['https://npm.example.com/repository/npm', 'https://npm.example.com/repository/npm/'],
      [' http://127.0.0.1:4873// ', 'http://127.0.0.1:4873/'],
    ]) {
      expect(
        loadConfig({ VERDICT_VALIDATION_INSTALL: 'registry', VERDICT_VALIDATION_REGISTRY: raw }).validation,
      ).toMatchObject({ install: 'registry', registry: want });
    }
  });
});

test.each([
  ['VERDICT_OPERATOR_CACHE_MS', '-1'],
  ['VERDICT_OPERATOR_CACHE_MS', '15001'],
  ['VERDICT_OPERATOR_CACHE_MS', 'soon'],
  ['VERDICT_SCHEDULER', 'maybe'],
  ['VERDICT_CRON_AUTHORITY', 'dry-run'],
  ['VERDICT_DELIVERY_RETENTION_DAYS', '-1'],
  ['VERDICT_DELIVERY_RETENTION_DAYS', 'forever'],
  ['VERDICT_WATCHDOG_ALERT_URL', 'ftp://alerts.example.com'],
  ['VERDICT_VALIDATION_INSTALL', 'online'],
  ['VERDICT_VALIDATION_INSTALL', '1'],
  ['VERDICT_VALIDATION_REGISTRY', 'registry.npmjs.org'],
  ['VERDICT_VALIDATION_REGISTRY', 'file:///srv/npm/'],
])('%s=%s stops start-up naming the variable', (variable, value) => {
  expect(() => loadConfig({ [variable]: value })).toThrow(expect.objectContaining({ variable }));
});

describe('JSON depth', () => {
  test('nesting is measured without recursion; at most 64 levels pass', async () => {
    const { nestedDeeperThan } = await import('../../src/http/json.js');
    const nest = (n: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
      return v;
    };
    expect(nestedDeeperThan(nest(64))).toBe(false);
    expect(nestedDeeperThan(nest(65))).toBe(true);
    expect(nestedDeeperThan(nest(100_000))).toBe(true);
    expect(nestedDeeperThan('text')).toBe(false);
  });
});

describe('verification settings', () => {
  test('VERDICT_VERIFICATION unset leaves it to the provider; the threshold defaults to 70; the verifier is of the primary provider', () => {
    expect(loadConfig({}, noFile).review.verification).toEqual({ enabled: null, threshold: 70 });
    const on = loadConfig(
      {
        VERDICT_VERIFICATION: '1',
        VERDICT_VERIFICATION_THRESHOLD: '85',
        VERDICT_RUNNER_PROVIDER: 'anthropic',
        VERDICT_VERIFIER_MODEL: ' claude-haiku-4-5 ',
      },
      noFile,
    ).review;
    expect(on.verification).toEqual({ enabled: true, threshold: 85 });
    expect(on.providers.verifier).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      modelVariable: 'VERDICT_VERIFIER_MODEL',
    });
    expect(loadConfig({ VERDICT_VERIFICATION: '0' }, noFile).review.verification.enabled).toBe(false);
    expect(() => loadConfig({ VERDICT_VERIFICATION_THRESHOLD: '101' }, noFile)).toThrow(
      /VERDICT_VERIFICATION_THRESHOLD must be an integer from 0 to 100/,
    );
    expect(() => loadConfig({ VERDICT_VERIFICATION: 'maybe' }, noFile)).toThrow(/VERDICT_VERIFICATION /);
  });
});

describe('provider and model selection', () => {
  test('is part of the typed config: defaults, key aliases and the variable a model is blamed on', () => {
    expect(loadConfig({}, noFile).review.providers).toEqual({
      primary: { provider: 'codex', model: null, modelVariable: 'VERDICT_RUNNER_MODEL' },
      shadow: null,
      verifier: null,
      maxTokens: null,
      openrouter: {
        apiKey: null,
        apiKeyVariable: 'OPENROUTER_API_KEY (or VERDICT_OPENROUTER_API_KEY)',
        baseUrl: 'https://openrouter.ai/api/v1',
        requireFree: true,
        appUrl: null,
        appName: 'Verdict',
      },
      openai: {
        apiKey: null,
        apiKeyVariable: 'OPENAI_API_KEY (or VERDICT_OPENAI_API_KEY)',
        baseUrl: 'https://api.openai.com/v1',
        keyRequired: true,
      },
      anthropic: {
        apiKey: null,
        apiKeyVariable: 'ANTHROPIC_API_KEY (or VERDICT_ANTHROPIC_API_KEY)',
        baseUrl: 'https://api.anthropic.com/v1',
        version: '2023-06-01',
        maxTokens: 8192,
      },
      codex: { bin: 'codex', home: null },
      priceOverrides: {},
    });
    const chosen = loadConfig(
      {
        REVIEWBOT_RUNNER_PROVIDER: 'OpenAI',
        REVIEWBOT_RUNNER_MODEL: 'gpt-4o',
        VERDICT_RUNNER_SHADOW_MODEL: ' claude-sonnet-4 ',
        VERDICT_RUNNER_SHADOW_PROVIDER: 'anthropic',
        OPENAI_API_KEY: ' ',
        VERDICT_OPENAI_API_KEY: 'alias',
        ANTHROPIC_API_KEY: 'bare',
        VERDICT_ANTHROPIC_API_KEY: 'alias',
        VERDICT_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/',
        VERDICT_OPENROUTER_MAX_TOKENS: '1000',
      },
      noFile,
    ).review.providers;
    expect(chosen.primary).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      modelVariable: 'REVIEWBOT_RUNNER_MODEL',
    });
    expect(chosen.shadow).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-4',
      modelVariable: 'VERDICT_RUNNER_SHADOW_MODEL',
    });
    expect(chosen.openai).toMatchObject({
      apiKey: 'alias',
      baseUrl: 'http://127.0.0.1:9/v1',
      // Another server than api.openai.com (Ollama, vLLM, LM Studio) may run without a key.
      keyRequired: false,
    });
    expect(chosen.anthropic).toMatchObject({ apiKey: 'bare', maxTokens: 1000 });
  });

  test('every provider variable is checked at start-up, whether or not its provider is selected', () => {
    for (const [variable, value] of [
      ['VERDICT_ANTHROPIC_MAX_TOKENS', 'lots'],
      ['VERDICT_OPENROUTER_BASE_URL', 'ftp://router'],
      ['VERDICT_RUNNER_SHADOW_PROVIDER', 'direct_b'],
      ['VERDICT_MODEL_PRICES', '{'],
    ]) {
      expect(() => loadConfig({ VERDICT_RUNNER_PROVIDER: 'codex', [variable!]: value }, noFile)).toThrow(
        expect.objectContaining({ variable }),
      );
    }
  });
});
