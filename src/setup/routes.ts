import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import type { Router } from '../http/router.js';
import { updateEnvFile } from './env-file.js';
import { buildManifest, newAppUrl, readAppYml, SETUP_CALLBACK_PATH, type AppYml } from './manifest.js';
import { html, raw, sendPage } from './page.js';

/**
 * The first-run App registration (issue 25 item 4, docs/setup.md): while the server has no App
 * credentials, `GET /` offers GitHub's App manifest flow and `GET /setup/callback` exchanges GitHub's code
 * for the App's credentials and writes them to `.env`. Only for clients on this machine unless
 * `VERDICT_SETUP_ALLOW_REMOTE=1`.
 */
export type SetupDeps = {
  config: Pick<Config, 'github' | 'port' | 'publicUrl' | 'setup'>;
  log: Logger;
  clock: Clock;
  /** The `.env` file the credentials are written to. */
  envFile: string;
  /** app.yml (default: the repository's). */
  appYml?: AppYml;
};

/** A state lives as long as GitHub's manifest code does (one hour). */
export const STATE_TTL_MS = 60 * 60 * 1000;
/** States kept at once; the oldest is dropped first. */
const MAX_STATES = 100;

/** The `state` values this process handed out: each is good once and for STATE_TTL_MS. */
export class SetupStates {
  private readonly issued = new Map<string, number>();
  constructor(private readonly clock: Clock) {}

  issue(): string {
    const state = randomBytes(24).toString('base64url');
    this.prune();
    while (this.issued.size >= MAX_STATES) this.issued.delete(this.issued.keys().next().value!);
    this.issued.set(state, this.clock.now() + STATE_TTL_MS);
    return state;
  }

  /** True once for a state this process issued and that has not expired; it is gone afterwards. */
  consume(state: string): boolean {
    const expires = this.issued.get(state);
    if (expires === undefined) return false;
    this.issued.delete(state);
    return this.clock.now() < expires;
  }

  private prune(): void {
    const now = this.clock.now();
    for (const [state, expires] of this.issued) if (expires <= now) this.issued.delete(state);
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * True for a request from this machine: a loopback peer address and no proxy header (a request a reverse
 * proxy forwards comes from the proxy's address, which says nothing about the browser behind it).
 */
export function isLocalRequest(req: IncomingMessage): boolean {
  const address = req.socket.remoteAddress ?? '';
  const proxied = req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined;
  return LOOPBACK.has(address) && !proxied;
}

/** The conversion's answer (GitHub's "Create a GitHub App from a manifest"), the fields Verdict keeps. */
const conversion = z.object({
  id: z.number().int(),
  slug: z.string().optional(),
  name: z.string().optional(),
  html_url: z.url(),
  pem: z.string().min(1),
  webhook_secret: z.string().min(1),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
});

const HOST_HEADER = /^[A-Za-z0-9.-]+(:\d+)?$|^\[[0-9A-Fa-f:.]+\](:\d+)?$/;

/** What the two setup routes share. */
type Setup = SetupDeps & {
  app: AppYml;
  states: SetupStates;
  /** Set once the credentials are in `.env`: the root page then says to restart. */
  created: { name: string; htmlUrl: string } | null;
};

export function registerSetupRoutes(router: Router, deps: SetupDeps): void {
  const setup: Setup = {
    ...deps,
    app: deps.appYml ?? readAppYml(),
    states: new SetupStates(deps.clock),
    created: null,
  };
  router.add('GET', '/', (req, res) => registrationPage(setup, req, res));
  router.add('GET', SETUP_CALLBACK_PATH, (req, res, _params, url) => callback(setup, req, res, url));
}

function allowed({ config, log }: Setup, req: IncomingMessage, res: ServerResponse): boolean {
  if (config.setup.allowRemote || isLocalRequest(req)) return true;
  log.warn(
    { event: 'setup-refused', remoteAddress: req.socket.remoteAddress },
    'the first-run App registration was asked for by a client that is not on this machine',
  );
  sendPage(
    res,
    403,
    'Setup is only open on this machine',
    html`<p>
        This server has no GitHub App credentials yet. Registering its App writes secrets into its
        <code>.env</code>, so the registration page answers only browsers on the same machine (a loopback
        address, not through a proxy).
      </p>
      <p>
        Open <code>http://localhost:${config.port}/</code> in a browser on the server itself, or start it with
        <code>VERDICT_SETUP_ALLOW_REMOTE=1</code> to allow other addresses.
      </p>`,
  );
  return false;
}

/** `GET /`: the page that registers the App (or says to restart once it is registered). */
function registrationPage(setup: Setup, req: IncomingMessage, res: ServerResponse): void {
  const { config, app, states } = setup;
  if (!allowed(setup, req, res)) return;
  if (setup.created) return sendCreated(res, setup.created, config.setup.org);
  const publicUrl = config.publicUrl ?? requestOrigin(req, config.setup.allowRemote);
  if (!publicUrl) {
    return sendPage(
      res,
      400,
      'Cannot tell this server’s address',
      html`<p>
        The request’s <code>Host</code> header is missing, not a host name, or (without
        <code>VERDICT_SETUP_ALLOW_REMOTE=1</code>) not a name of this machine such as <code>localhost</code>.
        Set <code>VERDICT_PUBLIC_URL</code> to the address GitHub and your browser reach this server at.
      </p>`,
    );
  }
  const manifest = buildManifest(app, publicUrl, config.github.webhookProxyUrl);
  const action = newAppUrl(config.github.webUrl, config.setup.org, states.issue());
  const where = config.setup.org
    ? html`the organisation <strong>${config.setup.org}</strong>`
    : html`your account`;
  const hookHost = new URL(manifest.hook_attributes.url).hostname;
  const unreachable = isLoopbackHost(hookHost)
    ? html`<p class="note">
        GitHub cannot deliver webhooks to <code>${manifest.hook_attributes.url}</code>, an address of this
        machine, and github.com refuses to create an App with it. First set <code>WEBHOOK_PROXY_URL</code> to
        a smee.io channel (<code>npm start</code> then forwards it here) or <code>VERDICT_PUBLIC_URL</code> to
        a public address of this server, restart, and reload this page.
      </p>`
    : raw('');
  sendPage(
    res,
    200,
    'Register Verdict on GitHub',
    html`<p>
        This server has no GitHub App credentials yet. One click registers the App described in
        <code>app.yml</code> on ${where} at <a href="${config.github.webUrl}">${config.github.webUrl}</a>;
        GitHub then sends you back here and Verdict writes the App’s credentials into <code>.env</code>.
      </p>
      <dl>
        <dt>Name</dt>
        <dd>${manifest.name} (GitHub asks for another one if it is taken)</dd>
        <dt>Webhook URL</dt>
        <dd><code>${manifest.hook_attributes.url}</code></dd>
        <dt>Permissions</dt>
        <dd>
          ${Object.entries(manifest.default_permissions)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')}
        </dd>
        <dt>Events</dt>
        <dd>${manifest.default_events.join(', ')}</dd>
      </dl>
      ${unreachable}
      <form action="${action}" method="post">
        <input type="hidden" name="manifest" value="${JSON.stringify(manifest)}" />
        <button type="submit">Register the GitHub App</button>
      </form>`,
    { formAction: action },
  );
}

/** `GET /setup/callback`: GitHub's code exchanged for the App's credentials, written to `.env`. */
async function callback(setup: Setup, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const { config, log, states } = setup;
  if (!allowed(setup, req, res)) return;
  const code = url.searchParams.get('code') ?? '';
  const state = url.searchParams.get('state') ?? '';
  if (!states.consume(state)) {
    log.warn(
      { event: 'setup-state-refused' },
      'a setup callback came with an unknown, used or expired state',
    );
    return sendPage(
      res,
      400,
      'This registration link is not valid',
      html`<p>
          The <code>state</code> of this callback is not one this server handed out, was used already or has
          expired (after an hour). Nothing was written.
        </p>
        <p><a href="/">Start again</a>.</p>`,
    );
  }
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(code)) {
    return sendPage(
      res,
      400,
      'GitHub sent no code',
      html`<p>The callback has no valid <code>code</code>. Nothing was written.</p>
        <p><a href="/">Start again</a>.</p>`,
    );
  }
  const exchanged = await exchangeCode(config.github.baseUrl, code);
  if (!exchanged.ok) {
    log.warn(
      { event: 'setup-conversion-failed', status: exchanged.status },
      `GitHub refused the manifest code: ${exchanged.message}`,
    );
    return sendPage(
      res,
      502,
      'GitHub did not give the App’s credentials',
      html`<p>
          GitHub answered the code exchange with
          ${exchanged.status ? `HTTP ${exchanged.status}` : 'no answer'}:
        </p>
        <pre class="error">${exchanged.message}</pre>
        <p>
          Nothing was written. A code is good once and for an hour; if the App was created anyway, delete it
          in GitHub’s settings or fill in <code>.env</code> by hand (README, “Connecting it to GitHub”).
        </p>
        <p><a href="/">Start again</a>.</p>`,
    );
  }
  const app = exchanged.app;
  if (!saveCredentials(setup, res, app)) return;
  setup.created = { name: app.name ?? app.slug ?? String(app.id), htmlUrl: app.html_url };
  log.info(
    { event: 'setup-app-created', appId: app.id, htmlUrl: app.html_url, envFile: setup.envFile },
    `GitHub App created; its credentials are in ${setup.envFile}: restart the server to use them`,
  );
  sendCreated(res, setup.created, config.setup.org);
}

/** Writes the App's credentials into `.env`; false once a 500 page has said that it could not. */
function saveCredentials(
  { envFile, log }: Setup,
  res: ServerResponse,
  app: z.infer<typeof conversion>,
): boolean {
  try {
    updateEnvFile(envFile, {
      APP_ID: String(app.id),
      PRIVATE_KEY: app.pem,
      WEBHOOK_SECRET: app.webhook_secret,
      GITHUB_CLIENT_ID: app.client_id,
      GITHUB_CLIENT_SECRET: app.client_secret,
    });
  } catch (error) {
    log.error({ event: 'setup-env-write-failed', err: error, envFile: envFile }, 'cannot write .env');
    sendPage(
      res,
      500,
      'The App was created, but .env could not be written',
      html`<p>
          GitHub created the App <a href="${app.html_url}">${app.html_url}</a>, but writing
          <code>${envFile}</code> failed: <code>${(error as Error).message}</code>.
        </p>
        <p>
          Open the App’s settings, generate a private key and a client secret there, and fill in
          <code>.env</code> by hand (README, “Connecting it to GitHub”).
        </p>`,
    );
    return false;
  }
  return true;
}

function sendCreated(res: ServerResponse, app: { name: string; htmlUrl: string }, org: string | null): void {
  const install = `${app.htmlUrl}/installations/new`;
  sendPage(
    res,
    200,
    'The GitHub App was created',
    html`<p>
        GitHub created the App <a href="${app.htmlUrl}">${app.name}</a>${org ? html` on ${org}` : raw('')}.
        Its id, private key, webhook secret and OAuth client are in <code>.env</code> (<code>APP_ID</code>,
        <code>PRIVATE_KEY</code>, <code>WEBHOOK_SECRET</code>, <code>GITHUB_CLIENT_ID</code>,
        <code>GITHUB_CLIENT_SECRET</code>; readable by your user only).
      </p>
      <ol>
        <li>
          Restart the server: stop it (Ctrl-C) and run <code>npm start</code>. This process keeps running
          without credentials until then.
        </li>
        <li><a href="${install}">Install the App</a> on the repositories Verdict should review.</li>
      </ol>`,
  );
}

type Exchange =
  { ok: true; app: z.infer<typeof conversion> } | { ok: false; status: number | null; message: string };

/** `POST /app-manifests/{code}/conversions` (no authentication: the code is the credential). */
async function exchangeCode(baseUrl: string, code: string): Promise<Exchange> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}/app-manifests/${encodeURIComponent(code)}/conversions`, {
      method: 'POST',
      headers: {
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'user-agent': 'verdict-setup',
      },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    return { ok: false, status: null, message: (error as Error).message };
  }
  const text = await response.text().catch(() => '');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // shown as text below
  }
  if (!response.ok) {
    const message = (body as { message?: unknown } | null)?.message;
    return {
      ok: false,
      status: response.status,
      message: typeof message === 'string' ? message : text.slice(0, 2000) || response.statusText,
    };
  }
  const parsed = conversion.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      status: response.status,
      message: `the answer lacks ${issue?.path.join('.') || 'a JSON body'} (${issue?.message ?? 'invalid'})`,
    };
  }
  return { ok: true, app: parsed.data };
}

/**
 * This request's own origin (`http://<Host>`), or null for a missing or odd Host header. Unless remote
 * clients are allowed, the Host must name this machine (localhost, 127.x, [::1]): a page of another site
 * whose name was re-pointed at 127.0.0.1 (DNS rebinding) must not get GitHub to send the code to it.
 */
function requestOrigin(req: IncomingMessage, allowRemote: boolean): string | null {
  const host = req.headers.host;
  if (!host || !HOST_HEADER.test(host)) return null;
  if (!allowRemote && !isLoopbackHost(new URL(`http://${host}`).hostname)) return null;
  const forwarded = req.headers['x-forwarded-proto'];
  const https = (req.socket as TLSSocket).encrypted === true || (allowRemote && forwarded === 'https');
  return `${https ? 'https' : 'http'}://${host}`;
}

function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127\./.test(h) || h === '::1';
}
