import type { ReportSource, SourceComment, SourcePr } from '../store/report-source.js';
import type { ReportFilters } from './params.js';
import { prKeyOf } from './tally.js';
import type { FindingCore, Note, Report, ReportPr, ReportSummary } from './types.js';

export type NotesContext = {
  filters: ReportFilters;
  source: ReportSource;
  summary: ReportSummary;
  coverage: Report['coverage'];
  findings: FindingCore[];
  reviewedPrs: ReportPr[];
  comments: SourceComment[];
  prs: Map<string, SourcePr>;
  seriesClipped: boolean;
  claimsWithoutEvidence: ReadonlySet<string>;
};

/** Every caveat a reader of this report needs, as `{code, message}`. */
export function reportNotes(ctx: NotesContext): Note[] {
  return [...findingNotes(ctx), ...scopeNotes(ctx)];
}

/** The caveats on how findings are followed, classified and counted. */
function findingNotes(ctx: NotesContext): Note[] {
  const notes: Note[] = [];
  const add = (code: string, message: string) => notes.push({ code, message });
  const { summary } = ctx;
  add(
    'status_rules',
    'A finding is "addressed" only when a later analysed review accepted a closure claim for it with evidence quoted from its head; a finding that a later review merely did not raise again is "not_reobserved", which is not a fix. "open" means the latest analysed review of the pull request still raises it.',
  );
  const unknown = summary.findings.byStatus.unknown;
  if (unknown > 0) {
    add(
      'status_unknown',
      `${unknown} finding(s) have status "unknown": they carry no fingerprint to follow across reviews, or the run that raised them is not on record as an analysed review.`,
    );
  }
  const unsupported = ctx.findings.filter(
    (f) => f.status === 'not_reobserved' && ctx.claimsWithoutEvidence.has(f.key),
  ).length;
  if (unsupported > 0) {
    add(
      'claims_without_evidence',
      `${unsupported} finding(s) had a closure claim recorded without evidence: they are counted as "not_reobserved", not "addressed".`,
    );
  }
  add(
    'findings_deduplicated',
    'A finding raised again by later reviews of the same pull request (same fingerprint) is counted once, in the period it was first raised; "occurrences" says how many reviews raised it, and its text, severity and location are those of the latest review that raised it.',
  );
  if (summary.findings.withoutPath > 0 || summary.findings.withoutLine > 0) {
    add(
      'location_nullable',
      `${summary.findings.withoutPath} finding(s) have no file path and ${summary.findings.withoutLine} no line number: the reviewer did not give them, so they are null, never guessed.`,
    );
  }
  const unknownSeverities = [
    ...new Set(ctx.findings.filter((f) => f.severity === 'unknown').map((f) => f.storedSeverity)),
  ];
  if (unknownSeverities.length > 0) {
    add(
      'severity_unknown',
      `Severities not on the P0–P3/info scale are reported as "unknown": ${unknownSeverities.slice(0, 10).join(', ')}.`,
    );
  }
  add(
    'severity_map',
    'Severity levels: blocker (or critical) is P0, high P1, medium P2, low P3, info info; anything else unknown.',
  );
  add(
    'security_heuristic',
    `"security" is classified from the category and the text of a finding (the review output has no security flag): true, false, or null when it cannot tell (${summary.findings.bySecurity.unknown} finding(s) in this report).`,
  );
  return notes;
}

/** The caveats on the filters, the pull-request records, the periods and the comments. */
function scopeNotes(ctx: NotesContext): Note[] {
  const notes: Note[] = [];
  const add = (code: string, message: string) => notes.push({ code, message });
  const { filters } = ctx;
  if (filters.team !== null) {
    add(
      'team_unknown',
      'Verdict records no team membership, so the team filter matches no pull request: this report is empty on purpose. Filter by author instead.',
    );
  }
  const unknownAuthors = ctx.reviewedPrs.filter((p) => p.author === null).length;
  if (unknownAuthors > 0) {
    add('author_unknown', `${unknownAuthors} reviewed pull request(s) have no recorded author.`);
  }
  const missingPr = ctx.reviewedPrs.filter((p) => !ctx.prs.has(prKeyOf(p.repo, p.number))).length;
  if (missingPr > 0) {
    add(
      'pr_metadata_missing',
      `${missingPr} reviewed pull request(s) have runs but no stored pull-request record: title, author and state are null.`,
    );
  }
  if (ctx.coverage.unknown > 0) {
    add(
      'coverage_unknown',
      `Semantic coverage is unknown for ${ctx.coverage.unknown} reviewed pull request(s): their latest review recorded no coverage.`,
    );
  }
  if (filters.from === null || filters.to === null) {
    add('comparison_unavailable', 'The comparison with the preceding period needs both from and to.');
  } else {
    add(
      'comparison_status_now',
      'The preceding period uses the same filters; finding statuses in both periods are as of generation time.',
    );
  }
  add(
    'period_attribution',
    'Periods and series buckets are UTC calendar days; weeks are ISO weeks starting on Monday. Findings count in the period they were first raised, runs and reviews by when the run was created, comments by when they were recorded.',
  );
  if (ctx.seriesClipped) {
    add(
      'series_partial_buckets',
      'The first and last series buckets may cover only part of their week or month: their from/to say which days.',
    );
  }
  add(
    'comments_definition',
    'Comments are the texts Verdict published on pull requests (reviews, replies and comments of the publication ledger; "shadow" ones were recorded but not posted) and the @verdict comment commands people wrote (no body is stored for those). Bodies are cut to 2000 characters.',
  );
  if (ctx.comments.some((c) => c.mode === 'shadow')) {
    add(
      'shadow_publications',
      'Some comments are in shadow mode: they were recorded but never posted on GitHub.',
    );
  }
  return notes;
}
