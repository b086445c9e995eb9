import type { ReportSource } from '../store/report-source.js';
import type { ReportSeverity } from './params.js';
import type { Period } from './summary.js';
import { cmp, entryOf, ranking } from './tally.js';
import type { Report, ReportPr } from './types.js';

/** Rankings over the period's findings and reviewed pull requests. */
export function buildRankings(
  current: Period,
  reviewedPrs: ReportPr[],
  source: ReportSource,
): Report['rankings'] {
  const high = (s: ReportSeverity) => (s === 'P0' || s === 'P1' ? 1 : 0);
  const repoStats = new Map<string, { reviewedPrs: number; findings: number; p0p1: number; open: number }>();
  const authorStats = new Map<string | null, { reviewedPrs: number; findings: number; p0p1: number }>();
  const categoryStats = new Map<string, { findings: number; p0p1: number; security: Set<boolean | null> }>();
  const fileStats = new Map<string, { repo: string; path: string; findings: number; p0p1: number }>();
  const repoEntry = (repo: string) =>
    entryOf(repoStats, repo, () => ({ reviewedPrs: 0, findings: 0, p0p1: 0, open: 0 }));
  const authorEntry = (author: string | null) =>
    entryOf(authorStats, author, () => ({ reviewedPrs: 0, findings: 0, p0p1: 0 }));
  for (const pr of reviewedPrs) {
    repoEntry(pr.repo).reviewedPrs++;
    authorEntry(pr.author).reviewedPrs++;
  }
  for (const { finding: f } of current.findings) {
    const r = repoEntry(f.repo);
    r.findings++;
    r.p0p1 += high(f.severity);
    if (f.status === 'open') r.open++;
    const a = authorEntry(f.author);
    a.findings++;
    a.p0p1 += high(f.severity);
    const c = entryOf(categoryStats, f.category, () => ({ findings: 0, p0p1: 0, security: new Set() }));
    c.findings++;
    c.p0p1 += high(f.severity);
    c.security.add(f.security);
    const path = f.path;
    if (path !== null) {
      const key = `${f.repo}\u0000${path}`;
      const file = entryOf(fileStats, key, () => ({ repo: f.repo, path, findings: 0, p0p1: 0 }));
      file.findings++;
      file.p0p1 += high(f.severity);
    }
  }
  const repoMeta = new Map(source.repositories.map((r) => [r.fullName, r]));
  const byCount = <T extends { findings: number; p0p1: number }>(a: T, b: T) =>
    b.findings - a.findings || b.p0p1 - a.p0p1;
  return {
    repositories: ranking(
      [...repoStats]
        .map(([repo, s]) => ({
          repo,
          ...s,
          installed: repoMeta.get(repo)?.installed ?? null,
          enabled: repoMeta.get(repo)?.enabled ?? null,
        }))
        .sort((a, b) => byCount(a, b) || b.reviewedPrs - a.reviewedPrs || cmp(a.repo, b.repo)),
    ),
    authors: ranking(
      [...authorStats]
        .map(([author, s]) => ({ author, ...s }))
        .sort(
          (a, b) =>
            byCount(a, b) || b.reviewedPrs - a.reviewedPrs || cmp(a.author ?? '\uffff', b.author ?? '\uffff'),
        ),
    ),
    categories: ranking(
      [...categoryStats]
        .map(([category, s]) => ({
          category,
          findings: s.findings,
          p0p1: s.p0p1,
          // The category's classification when all its findings agree; null when mixed or unknown.
          security: s.security.size === 1 ? ([...s.security][0] ?? null) : null,
        }))
        .sort((a, b) => byCount(a, b) || cmp(a.category, b.category)),
    ),
    files: ranking(
      [...fileStats.values()].sort((a, b) => byCount(a, b) || cmp(a.repo, b.repo) || cmp(a.path, b.path)),
    ),
  };
}
