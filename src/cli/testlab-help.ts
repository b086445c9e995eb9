/** `verdict testlab --help` (its own module, so that printing it does not load the Test Lab). */
export const TESTLAB_HELP = `Usage: verdict testlab run [--provider <p>] [--model <m>] [--samples <k>] [--cases <glob>] [--concurrency <n>]
                           [--judge-provider <p>] [--judge-model <m>] [--corpus <dir>] [--name <name>] [--db <path>] [--json]
       verdict testlab run --from-record <id> [--cases <glob>] [--db <path>] [--json]
       verdict testlab compare <a> <b> [--db <path>] [--json]
       verdict testlab add --from-pr <owner/repo#N> [--bug <path:line[-line]:category>]... [--name <case>]
                           [--severity <s>] [--keywords <a,b,...>] [--language <l>] [--corpus <dir>]

run: reviews the Test Lab corpus (fixtures/testlab) through the real pipeline against a local GitHub
API, scores the findings against the planted bugs, prints a table and saves a Test Lab record.
The provider and model default to VERDICT_RUNNER_PROVIDER / VERDICT_RUNNER_MODEL; "replay" serves
the authored answers of each case, offline, only to prompts that show the lines they rely on: a
pipeline check, not a measure of review quality; it skips the real pull requests (rbench-*: live only).
A real provider is a live run: every model call is recorded in the record with the hash of its prompt,
and --samples reviews each case that many times, each sample scored. --from-record replays a live
run's recorded answers, each only to a prompt with the same hash (a changed prompt is refused).

compare: the planted bugs one record caught and the other missed.

add: captures a pull request through the App's credentials (APP_ID, PRIVATE_KEY) into a new case:
its title, body and the changed files at base and head, and each --bug as a planted bug (none: a
clean case). Record its answers with "testlab run --cases <case> --provider <p> --record", then bind
them to the prompt with "npx tsx scripts/testlab/derive-relies.ts <case>".

Options:
  --provider <p>        openrouter, openai, anthropic, codex or replay
  --model <m>           the model
  --samples <k>         reviews of each case in a live run (1 to 20, default 1)
  --from-record <id>    replay a live run's recorded answers (its cases unless --cases)
  --cases <glob>        case names, comma-separated globs (e.g. "py-*,go-*")
  --concurrency <n>     cases reviewed at once (1 to 32, default 4)
  --judge-provider <p>  a model that decides matches the rules cannot (optional)
  --judge-model <m>     its model
  --corpus <dir>        the corpus folder (default fixtures/testlab)
  --record              write the provider's answers into each case's answers/ (part-<n>.txt, for derive-relies)
  --name <name>         a label for the record (add: the case folder name)
  --db <path>           the store the record is saved to (default VERDICT_DB_PATH; DATABASE_URL selects PostgreSQL)
  --json                machine-readable output`;
