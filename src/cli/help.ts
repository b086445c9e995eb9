import { MEMORY_HELP } from './memory-help.js';
import { REVIEW_HELP } from './review.js';
import { TESTLAB_HELP } from './testlab-help.js';

/** The help text of each `verdict` command (`verdict <command> --help`), and of `verdict` itself (`main`). */
const COMMON = `  --db <path>        the SQLite store (default VERDICT_DB_PATH, ./data/verdict.sqlite; DATABASE_URL selects PostgreSQL)
  --init             create and migrate the store when --db names a file that does not exist
  --json             machine-readable output
  -h, --help         this help`;

export const HELP: Record<string, string> = {
  main: `verdict: the Verdict operator CLI

Usage: verdict <command> [options]

Commands:
  runs                 the newest review runs
  show <reviewKey>     one run: its analysis, findings and publication ledger
  usage                model and chat usage for a UTC date range
  requeue <reviewKey>  queue a new review of a stored head (a new variant)
  harness <reviewKey>  save a run's analysis as a harness record (Test Lab)
  memory <subcommand>  list and edit memory: contexts, clusters, knowledge documents; preview a PR
  testlab run|compare|add  score the Test Lab corpus; compare two records; capture a PR as a case
  doctor [--offline]   check the configuration: store, webhook secret, GitHub App, model provider, ...
  webhook send <event.action>  sign an example webhook and post it to the running server
  review               review a local git change with the configured model (no App, server or store)
  jobs run <name>      run one scheduled job once (command-bridge, watchdog, maintenance, pr-agent-loop, nightly-audit)
  worker               run a worker process (the review and webhook lanes)
  serve                run the server (webhooks, operator API, inline worker, scheduled jobs)

Options:
${COMMON}

The exit code says whether the command worked (0) or not (1); it is never the review verdict.
Run "verdict <command> --help" for a command's options.`,
  runs: `Usage: verdict runs [--limit <n>] [--db <path>] [--json]

The newest review runs, newest first.

Options:
  --limit <n>        how many (1 to 1000, default 20)
${COMMON}`,
  show: `Usage: verdict show <reviewKey> [--db <path>] [--json]

One run by its review key ({owner}/{repo}#{pr}@{headSha}[:{variant}]): status, verdict, confidence,
findings and the publication ledger. The head may be abbreviated to 7 or more characters (as
"verdict runs" prints it) when only one run of that pull request matches.

Options:
${COMMON}`,
  usage: `Usage: verdict usage [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--db <path>] [--json]

Model and chat usage (tokens and cost) for UTC days, inclusive; by default from the start of this
month through today. A total some call did not report is "unknown", never 0.

Options:
  --from <day>       first UTC day
  --to <day>         last UTC day
${COMMON}`,
  requeue: `Usage: verdict requeue <reviewKey> [--variant <name>] [--queue-db <path>] [--db <path>] [--json]

Queues a new review. The key must be a stored review key, or name the stored head of the pull
request; the pull request needs an installation id. The new run's key carries the variant
(default operator-{timestamp}).

Options:
  --variant <name>   the variant of the new review key
  --queue-db <path>  enqueue into this SQLite queue file (what a worker with VERDICT_QUEUE_DB_PATH claims from)
                     instead of the store's own job table
${COMMON}`,
  harness: `Usage: verdict harness <reviewKey> [--name <name>] [--db <path>] [--json]

Saves an analysed run as a harness record (verdict, confidence, coverage and finding fingerprints),
a baseline that the Test Lab routes list. This writes to the store.

Options:
  --name <name>      a label for the record (default: the review key)
${COMMON}`,
  testlab: TESTLAB_HELP,
  memory: MEMORY_HELP,
  doctor: `Usage: verdict doctor [--offline] [--db <path>] [--json]

Checks the configuration npm start would use (the environment and ./.env) and prints one line per
check, "ok|warn|fail <check>: <detail>"; a warn or fail says what to set. Checks: config, store,
webhook-secret, github-app (GET /app with the App's JWT names the App), provider (its models list),
shadow-provider (when VERDICT_RUNNER_SHADOW_MODEL is set), dashboard, validation.

Exit 1 when a check fails, else 0 (warnings included).

Options:
  --offline          do not call GitHub or the model provider
${COMMON}`,
  webhook: `Usage: verdict webhook send <event.action> [--payload <file>] [--url <url>] [--secret <s>] [--json]

Signs a webhook payload with the webhook secret (x-hub-signature-256) and posts it to the running
server with x-github-event, a fresh x-github-delivery and content-type: application/json, then prints
the answer's status and body. Exit 0 on a 2xx answer, else 1.

<event.action> names the example payload of @octokit/webhooks-examples to send, e.g.
pull_request.opened, issue_comment.created, installation.created, or an event without actions (push).

Options:
  --payload <file>   send this JSON file instead of the example (the event still comes from the argument)
  --url <url>        where to post (default http://localhost:$PORT/github/webhooks, PORT default 8787)
  --secret <s>       the secret to sign with (default GITHUB_WEBHOOK_SECRET, else WEBHOOK_SECRET)
  --json             print {url, event, deliveryId, status, body}
  -h, --help         this help`,
  review: REVIEW_HELP,
  jobs: `Usage: verdict jobs run <name> [--db <path>] [--init]

Runs one scheduled job once against the configured store (and GitHub App), records its heartbeat and
artifact as a scheduled run does, and prints {job, status, artifact} as JSON. Exit 0 when it ran, 1 when
it failed.

Jobs:
  command-bridge     one pass of the command bridge (operator commands)
  watchdog           the heartbeat and artifact checks of the other jobs
  maintenance        expired dedupe markers, old deliveries and dashboard sessions
  pr-agent-loop      redeliver the App's failed webhook deliveries of the last 72 hours (at most 50) and
                     queue a review (trigger catch_up) of every open pull request whose head has no run
  nightly-audit      the night's consistency checks (unpublished analyses, dead letters, stuck commands,
                     unprocessed deliveries, failing repositories, the model budget), found ones as alerts;
                     scheduled at 23:30 Europe/London, run now whatever the time

Options:
${COMMON}`,
  worker: `Usage: verdict worker [--db <path>] [--queue-db <path>] [--init]

Runs a worker process against the store (what "npm run worker" runs). SIGTERM stops it gracefully.

Options:
  --queue-db <path>  claim review jobs from this SQLite queue file (VERDICT_QUEUE_DB_PATH)
${COMMON}`,
  serve: `Usage: verdict serve [--db <path>] [--init]

Runs the server (what "npm start" runs): PORT (default 8787) and HOST choose the address.

Options:
${COMMON}`,
};
