/**
 * What a review keeps of its validation (RunResult.validation), and the words it is shown in: the model's
 * evidence, `missingValidations`, the Validation Status section and the findings a failing check the pull
 * request introduced becomes. The decisions: docs/validation.md ("Into the review").
 */
import { z } from 'zod';
import { fenced } from '../review/fence.js';
import { escapeHtml } from '../html.js';

/** An output tail kept in the run record (the full tail, up to the executor's cap, is an artifact). */
export const STORED_TAIL_CHARS = 4000;
/** The output tail shown to the model and in a finding. */
export const SHOWN_TAIL_CHARS = 1500;

export const validationCommandSchema = z.object({
  check: z.string(),
  command: z.string(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  passed: z.boolean(),
  outputTail: z.string(),
  outputBytes: z.number(),
  /**
   * For a failed command: whether the pull request introduced the failure (true: it passes at the base
   * commit; false: it fails there too; null: the base could not be checked).
   */
  introduced: z.boolean().nullable(),
  /** Why `introduced` is null, or what the base run said. */
  baseNote: z.string().nullable(),
});

export const validationReportSchema = z.object({
  /**
   * `passed`/`failed`/`timed_out`: checks ran; `skipped`: deliberately not run (docs-only change);
   * `not_run`/`refused`/`error`: nothing or not everything could run, and `notRun` says why.
   */
  status: z.enum(['passed', 'failed', 'timed_out', 'skipped', 'refused', 'not_run', 'error']),
  /** The primary executor, or null when none was selected. */
  executor: z.string().nullable(),
  /** The outcome line (review-engine 7.4 wording where it gives one). */
  evidence: z.string(),
  commands: z.array(validationCommandSchema),
  /** What did not run and why: every line also goes to `missingValidations`. */
  notRun: z.array(z.string()),
  /** What does not change the outcome (offline sandbox, deferred filters, a failed budget read). */
  notes: z.array(z.string()),
  /** The shadow executor's outcome: shown, never evidence that validation failed. */
  shadow: z.object({ executor: z.string(), status: z.string(), evidence: z.string() }).nullable(),
  durationMs: z.number(),
});

export type ValidationReport = z.infer<typeof validationReportSchema>;
export type ValidationCommand = z.infer<typeof validationCommandSchema>;

export function tail(text: string, chars: number): string {
  return text.length <= chars ? text : `…${text.slice(text.length - chars)}`;
}

/** Whether the validation says the change is not known to pass its checks (the merge status's input). */
export function validationFailed(report: Pick<ValidationReport, 'status'> | null | undefined): boolean {
  return report?.status === 'failed' || report?.status === 'timed_out';
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** One line per command: `PASSED npm run test (1.2 s)`, `FAILED npm run lint (exit 1, 0.4 s)`. */
export function commandLine(c: ValidationCommand): string {
  if (c.passed) return `PASSED \`${c.command}\` (${seconds(c.durationMs)})`;
  if (c.timedOut) return `TIMED OUT \`${c.command}\` (killed after ${seconds(c.durationMs)})`;
  const how = c.exitCode !== null ? `exit ${c.exitCode}` : `signal ${c.signal ?? 'unknown'}`;
  const origin =
    c.introduced === true
      ? '; passes at the base commit, so this pull request introduced the failure'
      : c.introduced === false
        ? '; fails at the base commit too'
        : '';
  return `FAILED \`${c.command}\` (${how}, ${seconds(c.durationMs)}${origin})`;
}

/** The validation as the model reads it (a section of the prompt). */
export function validationEvidence(report: ValidationReport): string {
  if (report.commands.length === 0) {
    return `Verdict did not run the repository's checks for this review: ${report.evidence}. Claim nothing about whether they pass.`;
  }
  const lines = [
    `Verdict ran the repository's checks at the head commit in a sandbox (${report.executor ?? 'no executor'}): ${report.evidence}`,
    ...report.commands.map((c) => `- ${commandLine(c)}`),
    ...report.notRun.map((n) => `- not run: ${n}`),
  ];
  for (const c of report.commands.filter((c) => !c.passed)) {
    lines.push(
      `Output of \`${c.command}\` (last ${SHOWN_TAIL_CHARS} characters):`,
      fenced(tail(c.outputTail, SHOWN_TAIL_CHARS)),
    );
  }
  lines.push(
    'Use these results as evidence: explain in your findings what in the diff makes a failing check fail, citing its output. Verdict itself reports each failing check as a finding, so do not repeat the bare failure.',
  );
  return lines.join('\n');
}

export type ValidationFinding = {
  severity: 'high' | 'medium';
  category: 'validation';
  path: string;
  title: string;
  body: string;
  contextIds: string[];
  /** The command whose output is the finding's evidence (its artifact is attached to it). */
  validationCommand: string;
};

/**
 * A failing check the pull request introduced (it passes at the base commit) is a `high` finding with its
 * output as evidence. One whose origin could not be checked is `medium`; one that fails at the base too is
 * not a finding (it is in the Validation Status). The path is the first changed path the output names,
 * else the first changed code file, else the first changed path.
 */
export function validationFindings(report: ValidationReport, changedPaths: string[]): ValidationFinding[] {
  const out: ValidationFinding[] = [];
  for (const c of report.commands) {
    if (c.passed || c.introduced === false) continue;
    const what = c.timedOut ? 'does not finish' : 'fails';
    out.push({
      severity: c.introduced === true ? 'high' : 'medium',
      category: 'validation',
      path: pathFor(c.outputTail, changedPaths),
      title: `\`${c.command}\` ${what} at this head`,
      body: [
        `${commandLine(c)}.`,
        c.baseNote ? `${c.baseNote}.` : null,
        `The last lines of its output:`,
        fenced(tail(c.outputTail, SHOWN_TAIL_CHARS)),
      ]
        .filter((l): l is string => l !== null)
        .join('\n\n'),
      contextIds: [],
      validationCommand: c.command,
    });
  }
  return out;
}

const DOCISH = /\.(md|mdx|markdown|rst|txt|png|jpe?g|gif|svg|lock)$|(^|\/)package-lock\.json$/i;

function pathFor(output: string, changedPaths: string[]): string {
  const named = changedPaths.filter((p) => output.includes(p)).sort((a, b) => b.length - a.length)[0];
  if (named) return named;
  const tests = changedPaths.filter((p) =>
    /(^|\/)(tests?|__tests__|spec)\/|[._-](test|spec)\.[a-z]+$/i.test(p),
  );
  return tests[0] ?? changedPaths.find((p) => !DOCISH.test(p)) ?? changedPaths[0] ?? '';
}

/** The Validation Status lines of what ran (the MISSING lines come from `missingValidations`). */
export function validationStatusLines(report: ValidationReport): string[] {
  const lines: string[] = [];
  if (report.commands.length > 0) {
    lines.push(`Executor \`${report.executor}\`: ${escapeHtml(report.evidence)}`);
    for (const c of report.commands) {
      lines.push(`- RAN: ${commandLine(c)}`);
      if (!c.passed) {
        lines.push(
          `\n  <details><summary>Output of <code>${escapeHtml(c.command)}</code></summary>\n\n${fenced(
            tail(c.outputTail, SHOWN_TAIL_CHARS),
          )
            .split('\n')
            .map((l) => `  ${l}`)
            .join('\n')}\n\n  </details>\n`,
        );
      }
    }
  } else if (report.status === 'skipped') {
    const said = report.evidence.startsWith('SKIPPED') ? '' : 'SKIPPED: ';
    lines.push(`- ${said}${escapeHtml(report.evidence)}`);
  }
  if (report.shadow) {
    lines.push(
      `- SHADOW \`${report.shadow.executor}\`: ${escapeHtml(report.shadow.evidence)} (a shadow run is never evidence that validation failed)`,
    );
  }
  for (const n of report.notes) lines.push(`- NOTE: ${escapeHtml(n)}`);
  return lines;
}
