import { parseArgs } from 'node:util';
import { createLogger } from '../logger.js';
import {
  failsAt,
  reviewJson,
  reviewMarkdown,
  runLocalReview,
  type LocalReview,
  type Severity,
} from '../local-review/run.js';
import { FINDING_SEVERITIES } from '../review/output.schema.js';
import type { Io as CliIo } from './io.js';

type Io = Pick<CliIo, 'stdout' | 'stderr' | 'env'>;

export const REVIEW_HELP = `Usage: verdict review [--repo <dir>] [--base <ref>] [--head <ref>] [--format markdown|json]
                      [--fail-on blocker|high|medium|low]

Reviews a local git repository's change with the configured model provider (VERDICT_RUNNER_PROVIDER,
VERDICT_RUNNER_MODEL, and the provider's key or VERDICT_OPENAI_BASE_URL) and the same engine, prompts
and rendering as a pull-request review, and prints the review. No GitHub App, server or store is needed.

The change is what --head adds since its merge base with --base, as a pull request from --head into
--base would show it; only committed changes are reviewed. Instruction files (AGENTS.md, CLAUDE.md, ...)
and .github/verdict.yml are read at --base.

Options:
  --repo <dir>       a directory of the repository (default: the current directory)
  --base <ref>       the base branch or commit (default: origin's default branch, else main)
  --head <ref>       the commit to review (default: HEAD)
  --format <format>  markdown: the review body, then each line comment as path:line (default);
                     json: the run result with its findings
  --json             the same as --format json
  --fail-on <sev>    exit 2 when the review publishes a finding of this severity or a higher one
  -h, --help         this help

Only the review goes to stdout; progress and notes go to stderr (LOG_LEVEL=info adds the pipeline's log).
Exit codes: 0 the review completed (or there is nothing to review), 1 an error, 2 --fail-on matched.
See docs/local-review.md.`;

const OPTIONS = {
  repo: { type: 'string' },
  base: { type: 'string' },
  head: { type: 'string' },
  format: { type: 'string' },
  json: { type: 'boolean' },
  'fail-on': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const FORMATS = ['markdown', 'json'] as const;
const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** A refusal of the command line, printed as one line. */
class UsageError extends Error {}

/** `verdict review`: resolves with the exit code (0 reviewed, 1 error, 2 `--fail-on` matched). */
export async function reviewCommand(argv: string[], io: Io): Promise<number> {
  const say = (line: string) => io.stderr(`verdict review: ${line}`);
  try {
    const { values: opts, positionals } = parseArgs({
      args: argv,
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    if (opts.help) {
      io.stdout(REVIEW_HELP);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`takes no arguments (got "${positionals[0]}")`);
    const format = opts.json ? 'json' : (opts.format ?? 'markdown');
    if (!(FORMATS as readonly string[]).includes(format)) {
      throw new UsageError(`--format must be markdown or json (got "${format}")`);
    }
    if (opts.json && opts.format !== undefined && opts.format !== 'json') {
      throw new UsageError('--json and --format markdown contradict each other');
    }
    const failOn = opts['fail-on'];
    if (failOn !== undefined && !(FINDING_SEVERITIES as readonly string[]).includes(failOn)) {
      throw new UsageError(`--fail-on must be one of ${FINDING_SEVERITIES.join(', ')} (got "${failOn}")`);
    }
    for (const [name, value] of [
      ['--repo', opts.repo],
      ['--base', opts.base],
      ['--head', opts.head],
    ] as const) {
      if (value !== undefined && value.trim() === '') throw new UsageError(`${name} needs a value`);
    }
    const level = io.env.LOG_LEVEL?.trim().toLowerCase() || 'silent';
    const review = await runLocalReview({
      repo: opts.repo ?? process.cwd(),
      base: opts.base,
      head: opts.head,
      env: io.env,
      log: createLogger(LOG_LEVELS.has(level) ? level : 'silent', process.stderr),
      progress: say,
    });
    return report(review, format as (typeof FORMATS)[number], failOn as Severity | undefined, io, say);
  } catch (error) {
    say(((error as Error)?.message ?? String(error)).split('\n')[0]!);
    return 1;
  }
}

function report(
  review: LocalReview,
  format: (typeof FORMATS)[number],
  failOn: Severity | undefined,
  io: Io,
  say: (line: string) => void,
): number {
  const { change } = review;
  if (review.kind === 'no_changes') {
    const what = `${change.head.ref} (${change.head.sha.slice(0, 7)}) changes nothing since its merge base ${change.mergeBase.slice(0, 7)} with ${change.base.ref}`;
    if (format === 'json') {
      io.stdout(
        JSON.stringify(
          {
            reviewed: false,
            reason: 'no_changes',
            base: change.base,
            head: change.head,
            mergeBase: change.mergeBase,
          },
          null,
          2,
        ),
      );
    } else io.stdout(`Nothing to review: ${what}.`);
    say(`nothing to review: ${what}`);
    return 0;
  }
  for (const note of review.notes) say(`note: ${note}`);
  io.stdout(format === 'json' ? JSON.stringify(reviewJson(review), null, 2) : reviewMarkdown(review));
  const findings = review.findings.length;
  say(
    `${review.run.analysisStatus}: ${findings} finding(s), ${review.comments.length} line comment(s), verdict ${review.result.output.verdict}`,
  );
  if (failOn !== undefined && failsAt(review.findings, failOn)) {
    say(`failing: the review publishes a finding at or above ${failOn} (--fail-on ${failOn})`);
    return 2;
  }
  return 0;
}
