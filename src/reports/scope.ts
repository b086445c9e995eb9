import type { ReportSource, SourceComment, SourcePr, SourceRun } from '../store/report-source.js';
import type { ReportFilters } from './params.js';
import { classifySecurity } from './security.js';
import { reportSeverity } from './severity.js';
import { findingStatus, type StatusRun } from './status.js';
import { cmp, entryOf, isAnalysed, prKeyOf, securityKey } from './tally.js';
import type { Concern } from './types.js';

/** The findings, runs and comments that pass the report's filters (before the period window). */
export type Scope = {
  concerns: Concern[];
  runs: SourceRun[];
  comments: SourceComment[];
  lineComments: ReportSource['lineComments'];
  /** Closure claims recorded without evidence (they do not make a finding addressed; a note counts them). */
  claimsWithoutEvidence: Set<string>;
};

/** Applies the filters to the loaded history; every run list inherits the order oldest first, ties by id. */
export function scopeSource(source: ReportSource, filters: ReportFilters, prs: Map<string, SourcePr>): Scope {
  const sortedRuns = [...source.runs].sort((a, b) => a.createdAt - b.createdAt || cmp(a.id, b.id));
  // Closure claims recorded without evidence (they do not make a finding addressed; a note counts them).
  const claimsWithoutEvidence = new Set<string>();
  for (const run of source.runs) {
    for (const c of run.claims ?? []) {
      if (c.evidence.length === 0)
        claimsWithoutEvidence.add(`${prKeyOf(run.repo, run.prNumber)}:${c.fingerprint}`);
    }
  }

  // PR-level filters: repository, author, team (no team data: nothing matches).
  const authorFilter = filters.author?.toLowerCase() ?? null;
  const prPasses = new Map<string, boolean>();
  const passesPr = (repo: string, number: number): boolean => {
    const key = prKeyOf(repo, number);
    return entryOf(
      prPasses,
      key,
      () =>
        filters.team === null &&
        (filters.repo === null || repo === filters.repo) &&
        (authorFilter === null || (prs.get(key)?.author ?? '').toLowerCase() === authorFilter),
    );
  };
  const q = filters.q?.toLowerCase() ?? null;
  const prText = (repo: string, number: number) => {
    const pr = prs.get(prKeyOf(repo, number));
    return `${repo}#${number}\n${pr?.title ?? ''}\n${pr?.author ?? ''}`.toLowerCase();
  };
  const { concerns, prsWithMatchingFinding } = followFindings(source, prs, sortedRuns, passesPr, q);

  const prMatchesQ = (repo: string, number: number) =>
    q === null || prsWithMatchingFinding.has(prKeyOf(repo, number)) || prText(repo, number).includes(q);
  const findingFilter = (c: Concern): boolean => {
    const f = c.finding;
    if (filters.severity !== null && f.severity !== filters.severity) return false;
    if (filters.status !== null && f.status !== filters.status) return false;
    if (filters.security !== 'all' && securityKey(f.security) !== filters.security) return false;
    if (q !== null && !c.text!.includes(q) && !prText(f.repo, f.prNumber).includes(q)) return false;
    return true;
  };
  const matchingConcerns = concerns.filter(findingFilter);
  const runsInScope = sortedRuns.filter(
    (r) => passesPr(r.repo, r.prNumber) && prMatchesQ(r.repo, r.prNumber),
  );
  const commentsInScope = source.comments.filter((c) => {
    if (c.prNumber === null) return filters.author === null && filters.team === null && q === null;
    if (!passesPr(c.repo, c.prNumber)) return false;
    if (q === null) return true;
    return (c.body ?? '').toLowerCase().includes(q) || prMatchesQ(c.repo, c.prNumber);
  });

  const lineCommentsInScope = source.lineComments.filter(
    (c) => passesPr(c.repo, c.prNumber) && prMatchesQ(c.repo, c.prNumber),
  );
  return {
    concerns: matchingConcerns,
    runs: runsInScope,
    comments: commentsInScope,
    lineComments: lineCommentsInScope,
    claimsWithoutEvidence,
  };
}

/** Findings followed by fingerprint across the reviews of their pull request. */
function followFindings(
  source: ReportSource,
  prs: Map<string, SourcePr>,
  sortedRuns: SourceRun[],
  passesPr: (repo: string, number: number) => boolean,
  q: string | null,
): { concerns: Concern[]; prsWithMatchingFinding: Set<string> } {
  // Only analysed runs decide a status (failed or skipped runs saw nothing).
  const statusRunsByPr = new Map<string, StatusRun[]>();
  for (const r of sortedRuns) {
    if (!isAnalysed(r.analysisStatus)) continue;
    const run: StatusRun = { id: r.id, createdAt: r.createdAt, analysed: true, claims: r.claims };
    entryOf(statusRunsByPr, prKeyOf(r.repo, r.prNumber), () => []).push(run);
  }
  const groups = new Map<string, ReportSource['findings']>();
  for (const f of source.findings) {
    if (!passesPr(f.repo, f.prNumber)) continue;
    const prKey = prKeyOf(f.repo, f.prNumber);
    const key = f.fingerprint.trim() === '' ? `${prKey}\u0000#${f.id}` : `${prKey}\u0000${f.fingerprint}`;
    entryOf(groups, key, () => []).push(f);
  }
  const concerns: Concern[] = [];
  const prsWithMatchingFinding = new Set<string>();
  for (const rows of groups.values()) {
    rows.sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
    const first = rows[0]!;
    const last = rows[rows.length - 1]!;
    const prKey = prKeyOf(first.repo, first.prNumber);
    const pr = prs.get(prKey);
    const raisedBy: Pick<Set<string>, 'has'> = rows.length === 1
      ? { has: (id) => id === first.runId }
      : new Set(rows.map((r) => r.runId));
    const verdict = findingStatus(first.fingerprint, statusRunsByPr.get(prKey) ?? [], raisedBy);
    const text =
      q === null ? null : `${last.title}\n${last.body}\n${last.category}\n${last.path ?? ''}`.toLowerCase();
    if (q !== null && text!.includes(q)) prsWithMatchingFinding.add(prKey);
    concerns.push({
      prKey,
      firstSeen: first.createdAt,
      text,
      finding: {
        id: first.id,
        key: `${prKey}:${first.fingerprint}`,
        repo: first.repo,
        prNumber: first.prNumber,
        prTitle: pr?.title ?? null,
        author: pr?.author ?? null,
        fingerprint: first.fingerprint,
        severity: reportSeverity(last.severity),
        storedSeverity: last.severity,
        category: last.category,
        security: classifySecurity(last),
        status: verdict.status,
        statusReason: verdict.reason,
        title: last.title,
        body: last.body,
        path: last.path,
        line: last.line,
        outsideDiff: last.outsideDiff,
        firstSeen: first.createdAt,
        lastSeen: last.createdAt,
        occurrences: rows.length === 1 ? 1 : (raisedBy as Set<string>).size,
        firstRunId: first.runId,
        lastRunId: last.runId,
        resolution: verdict.resolution,
      },
    });
  }
  return { concerns, prsWithMatchingFinding };
}
