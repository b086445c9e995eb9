import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config, type ProcessEnv } from '../config/index.js';
import { loadE2bSdk } from '../validation/e2b.js';
import {
  DEFAULT_UI_DIST,
  dashboardCheck,
  githubAppCheck,
  storeCheck,
  validationCheck,
  webhookSecretCheck,
  type CheckDeps,
  type CheckResult,
} from './checks.js';
import { providerCheck } from './provider-check.js';

export { worst, type CheckResult, type CheckStatus } from './checks.js';

/**
 * `verdict doctor` (NAMES.md, "First run and the command line"): one line per check,
 * `ok|warn|fail <check>: <detail>`. The checks are in checks.ts; docs/operator.md lists them.
 */

/** How long one network check (GET /app, the models list) waits by default. */
export const DOCTOR_TIMEOUT_MS = 10_000;

export type DoctorOptions = {
  env: ProcessEnv;
  offline?: boolean;
  /** What `config` says it read besides the environment (e.g. `.env`). */
  sources?: string;
  knex?: Knex;
  serverUrl?: string;
  offlineNote?: string;
};

/** The one line of a check. */
export function formatCheck(result: CheckResult): string {
  return `${result.status} ${result.check}: ${result.detail}`;
}

function checkDeps(config: Config, opts: DoctorOptions): CheckDeps {
  return {
    env: opts.env,
    offline: opts.offline ?? false,
    fetch: globalThis.fetch,
    now: Date.now,
    timeoutMs: DOCTOR_TIMEOUT_MS,
    offlineNote: opts.offlineNote ?? '--offline',
    knex: opts.knex,
    serverUrl: opts.serverUrl ?? `http://localhost:${config.port}`,
    e2bSdkAvailable: async () => (await loadE2bSdk()) !== null,
    uiDist: DEFAULT_UI_DIST,
  };
}

/** Every check after the configuration parsed, in the order they print; the network ones run together. */
export async function runChecks(config: Config, opts: DoctorOptions): Promise<CheckResult[]> {
  const deps = checkDeps(config, opts);
  const providers = config.review.providers;
  return Promise.all([
    storeCheck(config, deps),
    webhookSecretCheck(config, deps),
    githubAppCheck(config, deps),
    providerCheck(config, providers.primary, 'provider', deps),
    ...(providers.shadow ? [providerCheck(config, providers.shadow, 'shadow-provider', deps)] : []),
    dashboardCheck(config, deps),
    validationCheck(config, deps),
  ]);
}

/**
 * The whole doctor: the configuration parses (else that is the one failing line, as `npm start` would
 * refuse to start), then every check.
 */
export async function runDoctor(opts: DoctorOptions): Promise<CheckResult[]> {
  let config: Config;
  try {
    config = loadConfig(opts.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return [{ check: 'config', status: 'fail', detail: `${error.message} (npm start refuses to start)` }];
  }
  const config_: CheckResult = {
    check: 'config',
    status: 'ok',
    detail: `the configuration parses${opts.sources ? ` (${opts.sources})` : ''}`,
  };
  return [config_, ...(await runChecks(config, opts))];
}

/**
 * `npm start`'s start-up checks: the doctor's checks without the network (start-up is never held up by
 * GitHub or a model provider), on the store the server opened, each logged as one line (`ok` at info,
 * `warn` and `fail` as warnings; the server keeps running either way). Resolves with the results.
 */
export async function logStartupChecks(
  config: Config,
  opts: { log: Logger; env: ProcessEnv; knex: Knex; serverUrl: string },
): Promise<CheckResult[]> {
  let results: CheckResult[];
  try {
    results = await runChecks(config, {
      env: opts.env,
      offline: true,
      offlineNote: 'start-up does not call out; npx verdict doctor does',
      knex: opts.knex,
      serverUrl: opts.serverUrl,
    });
  } catch (error) {
    opts.log.warn({ event: 'startup-checks', err: error }, 'the start-up checks could not run');
    return [];
  }
  for (const result of results) {
    const fields = { event: 'startup-check', check: result.check, status: result.status };
    if (result.status === 'ok') opts.log.info(fields, formatCheck(result));
    else opts.log.warn(fields, formatCheck(result));
  }
  const attention = results.filter((r) => r.status !== 'ok').length;
  if (attention > 0) {
    opts.log.warn(
      { event: 'startup-checks', attention },
      `${attention} start-up check(s) need attention (above); the server keeps running. Run "npx verdict doctor" to check again, GitHub and the model provider included`,
    );
  }
  return results;
}
