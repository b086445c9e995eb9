import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import type { Config, ProcessEnv } from '../config/index.js';
import { createKnex, migrationState } from '../store/db.js';
import { findBinary } from '../validation/bubblewrap.js';

/**
 * The checks of `verdict doctor` and of `npm start`'s start-up log (NAMES.md, "First run and the command
 * line"): each looks at one part of the configuration and says `ok`, `warn` or `fail` with a detail that
 * names what to set. Which finding is `warn` and which `fail` is written in docs/operator.md ("verdict
 * doctor"). Everything from outside (the environment, fetch, the clock, PATH, the e2b SDK) is injected.
 */

export type CheckStatus = 'ok' | 'warn' | 'fail';
export type CheckResult = { check: string; status: CheckStatus; detail: string };

export type CheckDeps = {
  /** The environment the configuration was read from (to name the variable that supplied a value). */
  env: ProcessEnv;
  /** No network: GitHub and the model provider are not asked. */
  offline: boolean;
  fetch: typeof fetch;
  /** Milliseconds since the epoch (the App's JWT is issued at this time). */
  now: () => number;
  /** How long one network check waits for its answer. */
  timeoutMs: number;
  /** Why a check did not ask the network (`--offline`, or start-up). */
  offlineNote: string;
  /** The store's open connection (start-up has one); without it the check opens the configured store. */
  knex?: Knex;
  /** Where this server answers, for the first-run App registration page. */
  serverUrl: string;
  /** Whether the optional `e2b` SDK loads. */
  e2bSdkAvailable: () => Promise<boolean>;
  /** The dashboard's build (index.html, assets/), as the server serves it. */
  uiDist: string;
};

/** Where the server finds the dashboard's build by default (src/compose/server.ts): web/dist. */
export const DEFAULT_UI_DIST = fileURLToPath(new URL('../../web/dist', import.meta.url));

export const ok = (check: string, detail: string): CheckResult => ({ check, status: 'ok', detail });
export const warn = (check: string, detail: string): CheckResult => ({ check, status: 'warn', detail });
export const fail = (check: string, detail: string): CheckResult => ({ check, status: 'fail', detail });

/** The worst of several statuses. */
export function worst(statuses: CheckStatus[]): CheckStatus {
  return statuses.includes('fail') ? 'fail' : statuses.includes('warn') ? 'warn' : 'ok';
}

export const isSet = (value: string | undefined): value is string =>
  value !== undefined && value.trim() !== '';

export const message = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';

/** A GET with a time limit; the answer's JSON body (null when it is not JSON). */
export async function getJson(
  deps: CheckDeps,
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: unknown }> {
  const res = await deps.fetch(url, {
    method: 'GET',
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(deps.timeoutMs),
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: res.status, body };
}

/** Why a request failed, as the network says it (a timeout says how long it waited). */
export function networkError(error: unknown, timeoutMs: number): string {
  const name = (error as Error | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? message(error);
}

/** The message of an API's error body: GitHub `{message}`, OpenAI/OpenRouter/Anthropic `{error: {message}}`. */
export function apiMessage(body: unknown): string {
  const b = body as { message?: unknown; error?: { message?: unknown } | string } | null;
  const text =
    typeof b?.message === 'string'
      ? b.message
      : typeof b?.error === 'object' && typeof b.error?.message === 'string'
        ? b.error.message
        : typeof b?.error === 'string'
          ? b.error
          : '';
  return text ? `: ${text.slice(0, 200)}` : '';
}

// --- store ------------------------------------------------------------------------------------------------

/** The store opens and has run every migration of this code. */
export async function storeCheck(config: Config, deps: CheckDeps): Promise<CheckResult> {
  const check = 'store';
  const store = config.store;
  const where =
    store.client === 'sqlite'
      ? `SQLite ${store.filename}`
      : `PostgreSQL ${pgWhere(store.connectionString)}${store.schema ? ` (schema ${store.schema})` : ''}`;
  if (deps.knex) {
    return migrationResult(check, where, deps.knex).catch((error: unknown) =>
      fail(check, `${where} cannot be read: ${message(error)}`),
    );
  }
  if (store.client === 'sqlite' && store.filename !== ':memory:' && !existsSync(store.filename)) {
    return warn(
      check,
      `no store at ${store.filename} yet: npm start creates and migrates it (VERDICT_DB_PATH names another file, DATABASE_URL selects PostgreSQL)`,
    );
  }
  let knex: Knex | null = null;
  try {
    // Quiet: a connection error is this check's failure, not a console message.
    const quiet = () => undefined;
    knex = createKnex(store, { log: { warn: quiet, error: quiet, debug: quiet, deprecate: quiet } });
    return await withTimeout(migrationResult(check, where, knex), deps.timeoutMs);
  } catch (error) {
    return fail(
      check,
      `cannot open ${where}: ${message(error)} (${store.client === 'sqlite' ? 'VERDICT_DB_PATH' : 'DATABASE_URL'})`,
    );
  } finally {
    await knex?.destroy().catch(() => undefined);
  }
}

/** `host:port/database` of a PostgreSQL URL (never its password). */
function pgWhere(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.host}${url.pathname}`;
  } catch {
    return '(DATABASE_URL)';
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function migrationResult(check: string, where: string, knex: Knex): Promise<CheckResult> {
  const state = await migrationState(knex);
  if (state.unknown.length > 0) {
    return fail(
      check,
      `${where} was migrated by a newer Verdict (migrations this checkout does not know: ${state.unknown.join(', ')}): update this checkout, or point VERDICT_DB_PATH / DATABASE_URL at this version's store`,
    );
  }
  if (state.applied.length === 0) {
    return warn(check, `${where} opens but is empty: npm start migrates it`);
  }
  if (state.pending.length > 0) {
    return warn(
      check,
      `${where} opens; ${state.pending.length} migration(s) pending (${state.pending.join(', ')}): npm start applies them`,
    );
  }
  return ok(check, `${where} opens and is migrated (${state.applied.length} migrations)`);
}

// --- webhook secret ---------------------------------------------------------------------------------------

export function webhookSecretCheck(config: Config, deps: Pick<CheckDeps, 'env'>): CheckResult {
  const check = 'webhook-secret';
  if (config.github.webhookSecret === null) {
    return fail(
      check,
      "not set: every webhook is refused with 401 invalid_signature; set GITHUB_WEBHOOK_SECRET (or Probot's WEBHOOK_SECRET) to the App's webhook secret",
    );
  }
  const variable = isSet(deps.env.GITHUB_WEBHOOK_SECRET) ? 'GITHUB_WEBHOOK_SECRET' : 'WEBHOOK_SECRET';
  return ok(check, `${variable} is set; webhooks are verified with it`);
}

// --- GitHub App -------------------------------------------------------------------------------------------

const KEY_HELP =
  'set PRIVATE_KEY_PATH to the .pem file GitHub generated for the App (its settings page, "Private keys"), or PRIVATE_KEY to that file\'s contents';

/**
 * The App's credentials parse (APP_ID, an RSA private key) and, online, `GET /app` answers the App's JWT
 * (on GHE_HOST when set, as Probot calls it). No credentials at all is `warn`: the server runs in shadow
 * mode.
 */
export async function githubAppCheck(config: Config, deps: CheckDeps): Promise<CheckResult> {
  const check = 'github-app';
  const credentials = appCredentials(config, deps);
  if (!('key' in credentials)) return credentials;
  const { appId, key, keySource } = credentials;
  const mode =
    config.publishMode === 'shadow' ? '; VERDICT_PUBLISH_MODE=shadow keeps publication in shadow mode' : '';
  if (deps.offline) {
    return ok(
      check,
      `App ${appId} with an RSA private key from ${keySource}${mode} (GitHub not asked: ${deps.offlineNote})`,
    );
  }
  const url = `${config.github.baseUrl}/app`;
  let answer: { status: number; body: unknown };
  try {
    answer = await getJson(deps, url, {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${appJwt(appId, key, deps.now())}`,
      'user-agent': 'verdict-doctor',
      'x-github-api-version': '2022-11-28',
    });
  } catch (error) {
    return fail(
      check,
      `cannot reach ${url} (${networkError(error, deps.timeoutMs)}): check the network${isSet(deps.env.GHE_HOST) ? ', GHE_HOST and GHE_PROTOCOL' : ''}`,
    );
  }
  const app = answer.body as {
    slug?: unknown;
    name?: unknown;
    id?: unknown;
    owner?: { login?: unknown };
  } | null;
  if (answer.status === 200 && typeof app?.slug === 'string') {
    const owner = typeof app.owner?.login === 'string' ? `, owned by ${app.owner.login}` : '';
    return ok(
      check,
      `GET ${url} answered: the App is ${app.slug} (id ${String(app.id)}, "${String(app.name)}"${owner})${mode}`,
    );
  }
  if (answer.status === 401) {
    return fail(
      check,
      `GitHub refused the App's JWT at GET ${url} (401${apiMessage(answer.body)}): check that APP_ID ${appId} is the App whose key ${keySource} holds, and this machine's clock`,
    );
  }
  return fail(
    check,
    `GET ${url} answered ${answer.status}${apiMessage(answer.body)}${answer.status === 404 && isSet(deps.env.GHE_HOST) ? ': check GHE_HOST and GHE_PROTOCOL' : ''}`,
  );
}

/** The App's id and RSA key with where the key came from, or the check's answer when they do not parse. */
function appCredentials(
  config: Config,
  deps: CheckDeps,
): CheckResult | { appId: string; key: KeyObject; keySource: string | null } {
  const check = 'github-app';
  const { appId, privateKey } = config.github;
  const keySource = isSet(deps.env.PRIVATE_KEY)
    ? 'PRIVATE_KEY'
    : isSet(deps.env.PRIVATE_KEY_PATH)
      ? `PRIVATE_KEY_PATH (${deps.env.PRIVATE_KEY_PATH!.trim()})`
      : null;
  if (appId === null && privateKey === null) {
    return warn(
      check,
      `no App credentials: publication stays in shadow mode (webhooks are verified and recorded, nothing is posted to GitHub); register the App from app.yml at ${deps.serverUrl}/ while the server runs (docs/setup.md), or set APP_ID and PRIVATE_KEY_PATH (in .env) of an App you registered`,
    );
  }
  if (privateKey === null) {
    return fail(check, `APP_ID is set but no private key: ${KEY_HELP}`);
  }
  if (appId === null) {
    return fail(
      check,
      `${keySource} is set but APP_ID is not: set APP_ID to the App ID on the App's settings page`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: privateKey, format: 'pem' });
  } catch (error) {
    return fail(check, `${keySource} is not a PEM private key (${message(error)}): ${KEY_HELP}`);
  }
  if (key.asymmetricKeyType !== 'rsa') {
    return fail(
      check,
      `${keySource} is a ${key.asymmetricKeyType ?? 'non-RSA'} key; a GitHub App's key is RSA: ${KEY_HELP}`,
    );
  }
  return { appId, key, keySource };
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** The App's JWT (RS256, issued a minute early for clock drift, valid 10 minutes), as Probot signs it. */
export function appJwt(appId: string, key: KeyObject, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify({ iat: now - 60, exp: now + 540, iss: Number(appId) }));
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), key);
  return `${header}.${payload}.${base64url(signature)}`;
}

// --- dashboard --------------------------------------------------------------------------------------------

/**
 * With the dashboard on, its proxy's backend tokens (src/dashboard/proxy.ts: the read token for every
 * view, the command token for requeue / retry-publish / replay-webhook, the admin token for settings,
 * repositories, queue repair and API keys), a way to sign in, and its built pages.
 */
export function dashboardCheck(config: Config, deps: Pick<CheckDeps, 'uiDist'>): CheckResult {
  const check = 'dashboard';
  const dashboard = config.dashboard;
  if (!dashboard.enabled) return ok(check, 'off (VERDICT_OPERATOR_UI_ENABLED=1 serves it)');
  const failures: string[] = [];
  const warnings: string[] = [];
  if (!config.tokens.operatorRead) {
    failures.push('VERDICT_OPERATOR_READ_TOKEN is not set: every view answers 503 backend_not_configured');
  }
  if (!config.tokens.operatorCommand) {
    warnings.push(
      'VERDICT_OPERATOR_COMMAND_TOKEN is not set: requeue, retry-publish and replay-webhook answer 503',
    );
  }
  if (!config.tokens.operatorAdmin) {
    warnings.push(
      'VERDICT_OPERATOR_ADMIN_TOKEN is not set: settings, repository configuration, queue repair and API keys answer 503',
    );
  }
  const github =
    dashboard.oauth !== null && (dashboard.allowedLogins.length > 0 || dashboard.allowedOrgs.length > 0);
  if (dashboard.token === null && !github) {
    failures.push(
      'nobody can sign in: set VERDICT_OPERATOR_UI_TOKEN, or GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET with VERDICT_UI_ALLOWED_LOGINS or VERDICT_UI_ALLOWED_ORGS',
    );
  }
  if (!existsSync(join(deps.uiDist, 'index.html'))) {
    warnings.push(`its pages are not built (${deps.uiDist}): run npm run build:web`);
  }
  const problems = [...failures, ...warnings];
  if (problems.length === 0) {
    const signIn = [dashboard.token !== null ? 'dashboard token' : null, github ? 'GitHub' : null]
      .filter(Boolean)
      .join(' and ');
    return ok(check, `on; the proxy has the read, command and admin tokens; sign-in with the ${signIn}`);
  }
  return {
    check,
    status: failures.length > 0 ? 'fail' : 'warn',
    detail: `on, but ${problems.join('; ')}`,
  };
}

// --- validation -------------------------------------------------------------------------------------------

/**
 * With validation on, its executors (src/validation/executors.ts): `bubblewrap`, the default, needs `bwrap`
 * on PATH; `e2b` (chosen per repository) needs E2B_API_KEY and its SDK; `local` needs to be allowed.
 */
export async function validationCheck(config: Config, deps: CheckDeps): Promise<CheckResult> {
  const check = 'validation';
  const v = config.validation;
  if (!v.enabled) {
    return v.switch === 'off'
      ? ok(check, 'off: VERDICT_VALIDATION_ENABLED=0 (reviews say "disabled_by_operator")')
      : warn(
          check,
          'off: no executor is available (bwrap not on PATH, no E2B_API_KEY): reviews say "SKIPPED bubblewrap: binary unavailable"; install bubblewrap (Debian package bubblewrap) to run repositories\' checks',
        );
  }
  const notes: string[] = [];
  let status: CheckStatus = 'ok';
  const bwrap = findBinary('bwrap', deps.env.PATH);
  if (bwrap) {
    notes.push(`bubblewrap (the default executor): ${bwrap}`);
  } else {
    status = 'fail';
    notes.push(
      'bubblewrap (the default executor): bwrap is not on PATH, so validation is skipped ("SKIPPED bubblewrap: binary unavailable"): install it (Debian package bubblewrap) or set VERDICT_VALIDATION_ENABLED=0',
    );
  }
  if (v.e2bApiKey === null) {
    notes.push('e2b: no E2B_API_KEY (repositories that choose e2b are skipped)');
  } else if (!(await deps.e2bSdkAvailable())) {
    if (status === 'ok') status = 'warn';
    notes.push(
      'e2b: E2B_API_KEY is set but the e2b SDK does not load: run npm install (it is an optional dependency)',
    );
  } else {
    notes.push('e2b: E2B_API_KEY set, SDK loads');
  }
  if (v.allowLocal && (v.selfHostValidation !== '1' || v.isolatedCommand.length === 0)) {
    if (status === 'ok') status = 'warn';
    notes.push(
      'local: VERDICT_VALIDATION_ALLOW_LOCAL is on but it also needs VERDICT_SELF_HOST_VALIDATION=1 and VERDICT_VALIDATION_ISOLATED_COMMAND (else self_host_not_configured)',
    );
  }
  return { check, status, detail: `on; ${notes.join('; ')}` };
}
