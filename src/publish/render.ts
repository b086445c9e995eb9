import type { ReviewPolicy } from '../policy/policy.schema.js';
import { fenced } from '../review/fence.js';
import { normaliseFindingPath } from '../review/fingerprint.js';
import type { ReviewOutput } from '../review/output.schema.js';
import { validationStatusLines } from '../validation/report.js';
import type { EvidenceArtifact } from '../evidence/artifacts.js';
import { renderEvidence } from '../evidence/render.js';
import { findingMarker, reviewMarker } from './markers.js';
import { bullets, codePath, escapeInline, escapeText, indent, section } from './markdown.js';
import { memoryFooter } from './memory-footer.js';
import {
  mergeStatus,
  mergeStatusCause,
  verdictContradicts,
  type MergeStatus,
  type PublishableAnalysis,
} from './status.js';

/** GitHub refuses a review body over 65,536 characters. */
export const GITHUB_BODY_LIMIT = 65_536;
/** Room kept under the limit for the shortening note and the footer. */
const BODY_BUDGET = GITHUB_BODY_LIMIT - 1_000;

export const MERGE_STATUS_BADGE: Record<MergeStatus, string> = {
  CLEAR: '🟢 CLEAR',
  CAUTION: '🟡 CAUTION',
  BLOCK: '🔴 BLOCK',
};

export type RenderFinding = ReviewOutput['findings'][number] & {
  stillOpen?: boolean;
  /** Posted as a line comment of this review: the body lists it in one line with a link. */
  inline?: boolean;
  /** Link to the anchored lines at the reviewed head. */
  fileUrl?: string | null;
  /** Evidence artifacts backing an execution claim, and whether the claim is verified (2.6). */
  evidence?: {
    artifacts: EvidenceArtifact[];
    status: 'verified' | 'unverified' | null;
    downgradedReason: string | null;
  };
};

/** A finding still open from an earlier review: listed once, with a link to its thread when it has one. */
export type StillOpenItem = {
  severity: string;
  title: string;
  path: string | null;
  line: number | null;
  threadUrl: string | null;
};

/** A prior finding closed with accepted evidence in this review. */
export type ResolvedItem = {
  title: string;
  path: string | null;
  disposition: string;
  explanation: string;
  threadUrl: string | null;
};

export const SEVERITY_BADGE: Record<string, string> = {
  blocker: '🔴 BLOCKER',
  high: '🟠 HIGH',
  medium: '🟡 MEDIUM',
  low: '🔵 LOW',
};

export type RenderInput = PublishableAnalysis & {
  productName: string;
  policy: ReviewPolicy;
  /** Changed paths of the PR (normalised): a finding on another path is an outside-diff finding. */
  changedPaths: ReadonlySet<string>;
  /** Findings with their still-open marks (after the strictness filter), in place of `output.findings`. */
  findings: RenderFinding[];
  /** Bot handles for the feature tips (`verdict`, …). */
  botHandle: string;
  runId: string;
  /** Findings of earlier reviews still open (not posted again). */
  stillOpen?: StillOpenItem[];
  /** Prior findings this review closed with evidence. */
  resolved?: ResolvedItem[];
  /** One line saying what was reviewed ("Reviewed the 2 files changed since abc1234"). */
  reviewNote?: string | null;
  /** A link to a file (and lines) at the reviewed head, for paths in the body. */
  fileLink?: (path: string, line?: number | null, endLine?: number | null) => string | null;
  /** Repository instruction files the review followed (named in the footer). */
  instructionFiles?: string[];
  /** What verification withheld and what it could not check (absent or null: nothing to say). */
  verification?: VerificationView | null;
  /** Agreement across samples (absent or null: one sample). */
  samples?: SamplesView | null;
  /** Findings withheld because reviewers dismissed similar ones (memory; absent: none). */
  dismissedLike?: number;
};

/** A finding withheld after verification, as the body lists it. */
export type WithheldItem = {
  severity: string;
  title: string;
  path: string | null;
  line: number | null;
  reason: string;
};

/** Verification as the body shows it: the withheld findings, and the findings posted unverified. */
export type VerificationView = {
  withheld: WithheldItem[];
  /** Findings posted unverified because their verification call failed or answered unusably. */
  unverified: number;
  /** Why (the first failed call's error). */
  unverifiedReason: string | null;
};

/** Agreement across samples, as the body says it. */
export type SamplesView = { count: number; required: number; kept: number; dropped: number };

/** More low findings than this fold into a `<details>` block. */
export const LOW_FINDINGS_FOLD = 10;

const SEVERITY_ORDER: Record<string, number> = { blocker: 0, high: 1, medium: 2, low: 3 };

/** Findings by severity, most severe first; the model's order within one severity. */
export function bySeverity<T extends { severity: string }>(findings: readonly T[]): T[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => (SEVERITY_ORDER[a.f.severity] ?? 9) - (SEVERITY_ORDER[b.f.severity] ?? 9) || a.i - b.i)
    .map(({ f }) => f);
}

type Detail = 0 | 1 | 2 | 3;

function linked(text: string, url: string | null | undefined): string {
  return url ? `[${text}](${url})` : text;
}

function location(path: string | null, line: number | null | undefined, endLine?: number | null): string {
  if (!path) return '';
  const lines = line ? (endLine && endLine !== line ? `:${line}-${endLine}` : `:${line}`) : '';
  return codePath(`${path}${lines}`);
}

/** The one-line entries of the line comments posted with this review. */
function inlineLines(findings: RenderFinding[]): string {
  return findings
    .map(
      (f) =>
        `- **${f.severity.toUpperCase()}** ${linked(escapeInline(f.title), f.fileUrl)} — ${location(f.path, f.line, f.endLine)}`,
    )
    .join('\n');
}

/** The withheld findings: severity, title, where, and the verifier's reason (cut short at detail 2 and up). */
function withheldLines(items: WithheldItem[], detail: Detail): string {
  return bySeverity(items)
    .map((i) => {
      const reason = detail >= 2 && i.reason.length > 200 ? `${i.reason.slice(0, 200)}…` : i.reason;
      return `- **${i.severity.toUpperCase()}** ${escapeInline(i.title)}${i.path ? ` — ${location(i.path, i.line)}` : ''}: ${escapeInline(reason)}`;
    })
    .join('\n');
}

/** One line on the samples that agreed, when the review took more than one. */
function samplesNote(s: SamplesView | null): string | null {
  if (!s || s.count <= 1) return null;
  const kept = `${s.kept} finding${s.kept === 1 ? '' : 's'} recurred in at least ${s.required} of them and ${s.kept === 1 ? 'was' : 'were'} kept`;
  const dropped =
    s.dropped > 0 ? `; ${s.dropped} seen in fewer ${s.dropped === 1 ? 'was' : 'were'} dropped` : '';
  return `_Reviewed in ${s.count} independent samples: ${kept}${dropped}._`;
}

function stillOpenLines(items: StillOpenItem[]): string {
  return items
    .map(
      (i) =>
        `- **${i.severity.toUpperCase()}** ${escapeInline(i.title)}${i.path ? ` — ${location(i.path, i.line)}` : ''}${i.threadUrl ? ` ([thread](${i.threadUrl}))` : ''}`,
    )
    .join('\n');
}

const DISPOSITION_WORDS: Record<string, string> = {
  resolved: 'resolved',
  false_positive: 'a false positive',
  no_longer_applicable: 'no longer applicable',
};

function resolvedLines(items: ResolvedItem[]): string {
  return items
    .map(
      (i) =>
        `- ${escapeInline(i.title)}${i.path ? ` — ${codePath(i.path)}` : ''}: ${DISPOSITION_WORDS[i.disposition] ?? escapeInline(i.disposition)} (${escapeInline(i.explanation)})${i.threadUrl ? ` ([thread](${i.threadUrl}))` : ''}`,
    )
    .join('\n');
}

function findingLines(
  findings: RenderFinding[],
  detail: Detail,
  bodyChars: number,
  link?: RenderInput['fileLink'],
): string {
  const entry = (f: RenderFinding) => {
    const url = f.path && link ? link(f.path, f.line, f.endLine) : null;
    const where = f.path ? ` — ${url ? `[${codePath(f.path)}](${url})` : codePath(f.path)}` : '';
    const head = `- **${f.severity.toUpperCase()}** ${escapeInline(f.title)}${where}${f.stillOpen ? ' _(still open from an earlier review)_' : ''}${f.category ? ` · ${escapeInline(f.category)}` : ''}`;
    const unverified =
      f.evidence?.status === 'unverified'
        ? `\n  _Unverified: ${escapeInline(f.evidence.downgradedReason ?? 'no artifact backs it')}_`
        : '';
    const artifacts =
      f.evidence && f.evidence.artifacts.length > 0
        ? `\n\n  Evidence:\n${indent(renderEvidence(f.evidence.artifacts))}`
        : '';
    if (detail >= 3 || f.body.trim() === '') return `${head}${unverified}${artifacts}`;
    const body = f.body.length > bodyChars ? `${f.body.slice(0, bodyChars)}…` : f.body;
    return `${head}${unverified}\n\n${indent(escapeText(body))}${artifacts}`;
  };
  const sorted = bySeverity(findings);
  const lows = sorted.filter((f) => f.severity === 'low');
  const shown = lows.length > LOW_FINDINGS_FOLD ? sorted.filter((f) => f.severity !== 'low') : sorted;
  const entries = (list: RenderFinding[]) => list.map(entry).join('\n\n');
  const lines = entries(shown);
  if (shown === sorted) return lines;
  const folded = `<details>\n<summary>${lows.length} low findings</summary>\n\n${entries(lows)}\n\n</details>`;
  return lines === '' ? folded : `${lines}\n\n${folded}`;
}

/** The review's head: the comment header, the title, the merge status and the notes on how it was made. */
function headerParts(input: RenderInput): string[] {
  const { output, policy } = input;
  const status = mergeStatus(input);
  const parts: string[] = [];
  if (policy.commentHeader.trim() !== '') parts.push(policy.commentHeader.trim());
  parts.push(`## ${escapeInline(input.productName)} review`);
  // The computed status and its cause; the model's merge verdict as the model's words, and a
  // contradiction between the two said, never left for the reader to find.
  parts.push(
    [
      `**Merge Status: ${MERGE_STATUS_BADGE[status]}** (${mergeStatusCause(input)})`,
      `The model's merge verdict: “${escapeInline(output.mergeVerdict)}”${
        verdictContradicts(status, output.mergeVerdict)
          ? ` — this disagrees with the computed status above, which is what the findings and coverage say.`
          : ''
      }`,
    ].join('\n'),
  );
  if (input.reviewNote) parts.push(`_${escapeInline(input.reviewNote)}_`);
  const samples = samplesNote(input.samples ?? null);
  if (samples) parts.push(samples);
  const unverified = input.verification?.unverified ?? 0;
  if (unverified > 0) {
    const why = input.verification?.unverifiedReason;
    parts.push(
      `_${unverified} finding${unverified === 1 ? ' was' : 's were'} posted unverified: ${why ? escapeInline(why).replace(/[.\s]+$/, '') : 'the verification call failed'}._`,
    );
  }
  return parts;
}

/** The findings: line comments, those in and outside the changed files, still open, resolved, withheld. */
function findingParts(input: RenderInput, detail: Detail, shortened: string[]): string[] {
  const { policy } = input;
  const parts: string[] = [];
  const isInside = (f: RenderFinding) => input.changedPaths.has(normaliseFindingPath(f.path));
  // Line comments and findings still open from earlier reviews are listed in their own sections.
  const listed = input.findings.filter((f) => !f.inline && !(f.stillOpen && input.stillOpen));
  const inline = input.findings.filter((f) => f.inline);
  const inside = listed.filter(isInside);
  const outside = listed.filter((f) => !isInside(f));
  const bodyChars = detail >= 2 ? 300 : 4000;
  if (detail >= 2 && input.findings.some((f) => f.body.length > 300)) shortened.push('finding details');
  if (inline.length > 0) {
    parts.push(`### Line comments (${inline.length})\n\n${inlineLines(inline)}`);
  }
  const noFindings =
    inline.length > 0 ? '_No other findings in the changed files._' : '_No findings in the changed files._';
  parts.push(
    `### Findings (${inside.length})\n\n${inside.length === 0 ? noFindings : findingLines(inside, detail, bodyChars, input.fileLink)}`,
  );
  const stillOpen = input.stillOpen ?? [];
  if (stillOpen.length > 0) {
    parts.push(`### Still open (${stillOpen.length})\n\n${stillOpenLines(stillOpen)}`);
  }
  const resolved = input.resolved ?? [];
  if (resolved.length > 0) {
    parts.push(`### Resolved since the last review (${resolved.length})\n\n${resolvedLines(resolved)}`);
  }
  if (outside.length > 0) {
    parts.push(
      section(
        `Outside-Diff Findings (${outside.length})`,
        findingLines(outside, detail, bodyChars, input.fileLink),
        policy.summary.outsideDiff,
      ),
    );
  }
  const withheld = input.verification?.withheld ?? [];
  if (withheld.length > 0) {
    parts.push(
      `<details>\n<summary>Withheld after verification (${withheld.length})</summary>\n\n${withheldLines(withheld, detail)}\n\n</details>`,
    );
  }
  const dismissedLike = input.dismissedLike ?? 0;
  if (dismissedLike > 0) {
    const n = dismissedLike === 1 ? '1 finding' : `${dismissedLike} findings`;
    parts.push(`_${n} withheld: reviewers dismissed similar ones._`);
  }
  return parts;
}

function competitorBenchmark(comparison: ReviewOutput['competitorComparison']): string {
  const lists: Array<[string, string[]]> = [
    ['Agreements', comparison.agreements],
    ['Missed by the other reviewer', comparison.competitorMisses],
    ['Missed by us', comparison.ownMisses],
    ['Stronger findings of the other reviewer', comparison.strongerCompetitorFindings],
    ['Our stronger findings', comparison.strongerOwnFindings],
    ['Action items', comparison.actionItems],
  ];
  const body = [
    `Winner: **${comparison.winner}** (confidence ${comparison.confidence}/5). ${escapeInline(comparison.summary)}`,
    ...lists
      .filter(([, items]) => items.length > 0)
      .map(([label, items]) => `**${label}**\n${bullets(items)}`),
  ].join('\n\n');
  return `### Competitor Benchmark\n\n${body}`;
}

function renderAt(input: RenderInput, detail: Detail): { body: string; shortened: string[] } {
  const { output, policy } = input;
  const shortened: string[] = [];
  const parts = headerParts(input);

  const overview = [escapeText(output.overview.trim())];
  if (output.bulletHighlights.length > 0) {
    overview.push(bullets(output.bulletHighlights));
  }
  parts.push(section('Summary', overview.join('\n\n'), policy.summary.summary));

  const confidenceBody =
    output.reasoning.trim() === '' ? '_No reasoning given._' : escapeText(output.reasoning.trim());
  parts.push(
    section(`Analyst Confidence: ${output.confidenceScore}/5`, confidenceBody, policy.summary.confidence),
  );

  if (output.importantFiles.length > 0 && detail < 2) {
    const rows = output.importantFiles.map((f) => `| ${codePath(f.path)} | ${escapeInline(f.overview)} |`);
    parts.push(
      section(
        'Important Files',
        `| File | Why it matters |\n|---|---|\n${rows.join('\n')}`,
        policy.summary.files,
      ),
    );
  } else if (output.importantFiles.length > 0 && policy.summary.files.enabled) {
    shortened.push('the important-files table');
  }

  parts.push(...findingParts(input, detail, shortened));

  // What the sandbox ran (validation's own text: commands and output in code spans and fences).
  const validationLines = input.validation ? validationStatusLines(input.validation) : [];
  const ran =
    validationLines.length === 0
      ? input.validation
        ? 'No check was run.'
        : 'Nothing was executed: semantic review only.'
      : validationLines.join('\n');
  const missingLines = output.missingValidations.map((m) => `- MISSING: ${escapeInline(m)}`).join('\n');
  parts.push(`### Validation Status\n\n${ran}${missingLines === '' ? '' : `\n\n${missingLines}`}`);
  if (output.crossRepoImpact.length > 0) {
    parts.push(`### Cross-Repo Impact\n\n${bullets(output.crossRepoImpact)}`);
  }
  if (output.competitorComparison.available) parts.push(competitorBenchmark(output.competitorComparison));
  if (output.sequenceDiagram.trim() !== '') {
    if (detail < 1)
      parts.push(section('Sequence Diagram', fenced(output.sequenceDiagram.trim()), policy.summary.diagram));
    else if (policy.summary.diagram.enabled) shortened.push('the sequence diagram');
  }
  if (policy.promptToFix && input.findings.length > 0) {
    if (detail < 1) {
      const lines = input.findings.map((f) => `- ${f.path}: ${f.title.replace(/\s+/g, ' ').trim()}`);
      parts.push(`### Prompt to Fix\n\n${fenced(`Fix these review findings:\n${lines.join('\n')}`)}`);
    } else shortened.push('the prompt to fix');
  }
  const used = input.instructionFiles ?? [];
  if (used.length > 0) {
    parts.push(`<sub>Repository instructions followed: ${used.map((p) => codePath(p)).join(', ')}.</sub>`);
  }
  parts.push(memoryFooter(input.memory) ?? '');
  if (policy.featureTips) {
    const h = `@${input.botHandle}`;
    parts.push(
      `---\n<sub>Commands: \`${h} review\` re-reviews the current head · \`${h} status\` shows the latest run · \`${h} help\` lists commands.</sub>`,
    );
  }
  return { body: parts.filter((p) => p !== '').join('\n\n'), shortened };
}

/**
 * The review body, following the rendering maps of review-engine 8. A body over GitHub's limit is
 * shortened step by step (diagram and prompt to fix, then the file table and long finding details, then
 * finding details altogether, then a hard cut), always keeping the merge status, and says so.
 */
export function renderReviewBody(input: RenderInput): string {
  const footer = `\n\n${reviewMarker(input.runId)}`;
  for (const detail of [0, 1, 2, 3] as Detail[]) {
    const { body, shortened } = renderAt(input, detail);
    const note =
      shortened.length > 0
        ? `\n\n_Shortened to fit GitHub's size limit: ${shortened.join(', ')} left out._`
        : '';
    if (body.length + note.length + footer.length <= BODY_BUDGET) return body + note + footer;
  }
  const { body } = renderAt(input, 3);
  const note = `\n\n_Shortened to fit GitHub's size limit: the rest of this review was cut._`;
  return body.slice(0, BODY_BUDGET - note.length - footer.length) + note + footer;
}

/** A finding as the body of its line comment: severity, title, body, and a suggestion block. */
export function renderLineComment(f: {
  severity: string;
  category: string;
  title: string;
  body: string;
  suggestion: string | null;
  fingerprint: string;
}): string {
  const parts = [
    `**${SEVERITY_BADGE[f.severity] ?? escapeInline(f.severity.toUpperCase())}**${f.category.trim() ? ` · ${escapeInline(f.category)}` : ''}`,
    `**${escapeInline(f.title)}**`,
  ];
  if (f.body.trim() !== '') parts.push(escapeText(f.body.trim()));
  if (f.suggestion !== null) parts.push(fenced(f.suggestion.replace(/\n$/, ''), 'suggestion'));
  parts.push(findingMarker(f.fingerprint));
  return parts.join('\n\n');
}
