import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadConfig } from '../config/index.js';
import { CliError, type Io } from './io.js';
import type { Options } from './options.js';

/**
 * `verdict webhook send <event.action>`: a signed webhook, as GitHub sends it, posted to the running server
 * (NAMES.md, "First run and the command line"). The default payload is the first example of that event and
 * action in `@octokit/webhooks-examples` (a runtime dependency for this command).
 */

type ExampleGroup = { name: string; actions: string[]; examples: Array<Record<string, unknown>> };

let groups: ExampleGroup[] | null = null;

/** GitHub's example payloads, by event (loaded once, on first use: the file is 4 MB). */
function examples(): ExampleGroup[] {
  groups ??= createRequire(import.meta.url)('@octokit/webhooks-examples') as ExampleGroup[];
  return groups;
}

/** `pull_request.opened` → event and action; `push` → an event without an action. */
export function parseEventAction(spec: string): { event: string; action: string | null } {
  const dot = spec.indexOf('.');
  const event = dot === -1 ? spec : spec.slice(0, dot);
  const action = dot === -1 ? null : spec.slice(dot + 1);
  if (!/^[a-z_]+$/.test(event) || (action !== null && !/^[a-z_]+$/.test(action))) {
    throw new CliError(`"${spec}" is not <event.action> (e.g. pull_request.opened, or push)`);
  }
  return { event, action };
}

/** The actions of an event that have an example, in the order the examples list them. */
function exampleActions(group: ExampleGroup): string[] {
  return [...new Set(group.examples.map((p) => p.action).filter((a): a is string => typeof a === 'string'))];
}

/**
 * A deep copy of the first example of `event` (and `action`); an unknown event or action is a CliError
 * that lists what is available.
 */
export function examplePayload(event: string, action: string | null): Record<string, unknown> {
  const group = examples().find((g) => g.name === event);
  if (!group) {
    throw new CliError(
      `no example of the event "${event}"; the events with examples are: ${examples()
        .map((g) => g.name)
        .join(', ')}`,
    );
  }
  const actions = exampleActions(group);
  if (action === null) {
    const plain = group.examples.find((p) => typeof p.action !== 'string');
    if (plain) return structuredClone(plain);
    throw new CliError(
      `${event} needs an action; its examples are: ${actions.map((a) => `${event}.${a}`).join(', ')}`,
    );
  }
  const found = group.examples.find((p) => p.action === action);
  if (!found) {
    throw new CliError(
      actions.length === 0
        ? `${event} has no actions: send "${event}"`
        : `no example of ${event}.${action}; ${event} has examples of: ${actions.join(', ')} (or pass --payload <file>)`,
    );
  }
  return structuredClone(found);
}

/** `sha256=<hex>`: the HMAC-SHA256 of the exact body bytes (x-hub-signature-256). */
export function signature(body: Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export type SentWebhook = { status: number; statusText: string; body: string };

/** Posts a signed delivery as GitHub does. */
export async function sendWebhook(input: {
  url: string;
  event: string;
  deliveryId: string;
  body: Buffer;
  secret: string;
  fetch?: typeof fetch;
}): Promise<SentWebhook> {
  const res = await (input.fetch ?? globalThis.fetch)(input.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/verdict-cli',
      'x-github-event': input.event,
      'x-github-delivery': input.deliveryId,
      'x-hub-signature-256': signature(input.body, input.secret),
    },
    body: input.body,
    redirect: 'manual',
  });
  return { status: res.status, statusText: res.statusText, body: await res.text() };
}

/** The payload file: its exact bytes (they are what is signed), checked to be a JSON object. */
function payloadFile(path: string, action: string | null): Buffer {
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch (error) {
    throw new CliError(
      `--payload ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new CliError(`--payload ${path} is not JSON (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError(`--payload ${path} is not a JSON object`);
  }
  const own = (parsed as { action?: unknown }).action;
  if (action !== null && typeof own === 'string' && own !== action) {
    throw new CliError(`--payload ${path} has action "${own}", not "${action}"`);
  }
  return raw;
}

/** `verdict webhook send <event.action> [--payload FILE] [--url URL] [--secret S]`. */
export async function run(args: string[], opts: Options, io: Io): Promise<number> {
  const [sub, spec, ...rest] = args;
  if (sub !== 'send') {
    throw new CliError(sub === undefined ? 'needs a subcommand: send' : `unknown subcommand "${sub}" (send)`);
  }
  if (spec === undefined || rest.length > 0) throw new CliError('send needs exactly one <event.action>');
  const { event, action } = parseEventAction(spec);
  const body =
    opts.payload !== undefined
      ? payloadFile(opts.payload, action)
      : Buffer.from(JSON.stringify(examplePayload(event, action)));
  const config = loadConfig(io.env);
  const secret = opts.secret ?? config.github.webhookSecret;
  if (!secret) {
    throw new CliError('no webhook secret: set GITHUB_WEBHOOK_SECRET (or WEBHOOK_SECRET), or pass --secret');
  }
  const url = opts.url ?? `http://localhost:${config.port}/github/webhooks`;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new CliError(`--url must be an http:// or https:// URL (got "${url}")`);
  }
  const deliveryId = randomUUID();
  let answer: SentWebhook;
  try {
    answer = await sendWebhook({ url, event, deliveryId, body, secret });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new CliError(`cannot reach ${url} (${cause}): is the server running (npm start)?`);
  }
  if (opts.json) {
    let parsed: unknown = answer.body;
    try {
      parsed = JSON.parse(answer.body);
    } catch {
      // not JSON: kept as text
    }
    io.stdout(JSON.stringify({ url, event: spec, deliveryId, status: answer.status, body: parsed }, null, 2));
  } else {
    io.stdout(`POST ${url} ${spec} (x-github-delivery ${deliveryId})`);
    io.stdout(`${answer.status} ${answer.statusText}`.trimEnd());
    if (answer.body !== '') io.stdout(answer.body);
  }
  return answer.status >= 200 && answer.status < 300 ? 0 : 1;
}
