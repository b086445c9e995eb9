import { hostname } from 'node:os';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { renewIntervalMs } from '../../src/queue/types.js';

const noFile = () => {
  throw new Error('ENOENT');
};
const load = (env: Record<string, string>) => loadConfig(env, noFile);

describe('queue and worker configuration (review-engine 8)', () => {
  test.each([
    [
      { VERDICT_QUEUE_URL: 'http://q.internal:8787/', VERDICT_QUEUE_TOKEN: 't' },
      { kind: 'http', url: 'http://q.internal:8787', token: 't' },
    ],
    [{ DATABASE_URL: 'postgres://db/verdict', VERDICT_QUEUE_DB_PATH: '/q.sqlite' }, { kind: 'store' }],
    [{ VERDICT_QUEUE_DB_PATH: '/var/q.sqlite' }, { kind: 'sqlite', filename: '/var/q.sqlite' }],
    [{ VERDICT_DB_PATH: '/var/v.sqlite', VERDICT_QUEUE_DB_PATH: '/var/v.sqlite' }, { kind: 'store' }],
    [{}, { kind: 'store' }],
    [{ VERDICT_DB_PATH: ':memory:' }, { kind: 'memory' }],
    [
      { REVIEWBOT_QUEUE_URL: 'https://q', REVIEWBOT_QUEUE_TOKEN: 'legacy' },
      { kind: 'http', url: 'https://q', token: 'legacy' },
    ],
  ])(
    'queue selection (HTTP, then PostgreSQL, then the queue file, then the store file, then memory): %j',
    (env: Record<string, string>, queue) => {
      expect(load(env).queue).toEqual(queue);
    },
  );

  test('a queue URL without a token (or the reverse), or a bad URL, stops start-up naming the variable', () => {
    expect(() => load({ VERDICT_QUEUE_URL: 'http://q' })).toThrow(/VERDICT_QUEUE_TOKEN/);
    expect(() => load({ VERDICT_QUEUE_TOKEN: 't' })).toThrow(/VERDICT_QUEUE_URL/);
    expect(() => load({ VERDICT_QUEUE_URL: 'ftp://q', VERDICT_QUEUE_TOKEN: 't' })).toThrow(ConfigError);
  });

  test('worker defaults: one job, concurrency 1, host name id, lease = model + validation timeout + 5 minutes', () => {
    expect(load({}).worker).toEqual({
      id: hostname(),
      maxJobs: 1,
      concurrency: 1,
      leaseMs: (10 + 45 + 5) * 60_000,
    });
    expect(
      load({ VERDICT_RUNNER_TIMEOUT_MS: '120000', VERDICT_VALIDATION_TIMEOUT_MS: '0' }).worker.leaseMs,
    ).toBe(120_000 + 300_000);
  });

  test('VERDICT_QUEUE_LEASE_SECONDS wins; concurrency is capped by the job limit', () => {
    const w = load({
      VERDICT_QUEUE_LEASE_SECONDS: '90',
      VERDICT_WORKER_MAX_JOBS: '3',
      VERDICT_WORKER_CONCURRENCY: '8',
      VERDICT_WORKER_ID: 'box-7',
    }).worker;
    expect(w).toEqual({ id: 'box-7', maxJobs: 3, concurrency: 3, leaseMs: 90_000 });
    expect(() => load({ VERDICT_QUEUE_LEASE_SECONDS: '0' })).toThrow(/VERDICT_QUEUE_LEASE_SECONDS/);
    expect(() => load({ VERDICT_WORKER_CONCURRENCY: 'two' })).toThrow(/VERDICT_WORKER_CONCURRENCY/);
    expect(() => load({ REVIEWBOT_WORKER_MAX_JOBS: '-1' })).toThrow(/REVIEWBOT_WORKER_MAX_JOBS/);
  });

  test('lease renewal every min(30 s, a third of the lease), at least 1 ms', () => {
    expect(renewIntervalMs(3_600_000)).toBe(30_000);
    expect(renewIntervalMs(60_000)).toBe(20_000);
    expect(renewIntervalMs(2)).toBe(1);
  });

  test('service tokens: nullish prefix fallback; an empty canonical value closes the class', () => {
    const tokens = load({
      VERDICT_QUEUE_WORKER_TOKEN: 'w',
      REVIEWBOT_QUEUE_ADMIN_TOKEN: 'legacy-admin',
      VERDICT_OPERATOR_ADMIN_TOKEN: '',
      REVIEWBOT_OPERATOR_ADMIN_TOKEN: 'must-not-be-used',
    }).tokens;
    expect(tokens.queueWorker).toBe('w');
    expect(tokens.queueAdmin).toBe('legacy-admin');
    expect(tokens.operatorAdmin).toBeNull();
    expect(tokens.queueEnqueue).toBeNull();
  });
});

describe('public URL', () => {
  test('VERDICT_PUBLIC_URL is a http(s) URL without the trailing slash', () => {
    expect(load({}).publicUrl).toBeNull();
    expect(load({ VERDICT_PUBLIC_URL: 'https://v.example.com/' }).publicUrl).toBe('https://v.example.com');
    expect(() => load({ VERDICT_PUBLIC_URL: 'v.example.com' })).toThrow(/VERDICT_PUBLIC_URL/);
  });
});
