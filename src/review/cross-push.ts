import { AlikeIndex } from '../memory/alike.js';
import { findingFingerprint, normaliseFindingPath } from './fingerprint.js';

/**
 * Cross-push matching: a still-open finding the model words differently on the next push keeps its
 * identity, so its thread is kept and no second thread opens (NAMES.md "Memory"; docs/memory.md).
 * Fingerprints (path, category and normalised title) match only when the model repeats a title word for
 * word; this matches a new finding to a prior finding of the pull request that it does not match
 * exactly when
 *
 * - both are on the same path,
 * - their anchors are at or near each other: the prior finding's anchor, followed from the head it was
 *   raised at to this head (line-map.ts), and the new one's overlap once widened by
 *   `CROSS_PUSH_LINE_TOLERANCE` lines (a finding or prior finding without an anchor is matched on the
 *   rest alone), and
 * - their title and body are alike (memory/alike.ts).
 *
 * Each prior finding continues at most one new finding (the first, in the model's order, that is most
 * alike it), and never one whose fingerprint another new finding raised exactly. The matched finding
 * takes the prior finding's title and category, and so its fingerprint: it is that finding still open.
 */

/** Lines a new anchor may be from a prior finding's (followed) anchor and still be at it. */
export const CROSS_PUSH_LINE_TOLERANCE = 5;

/** A prior finding of the pull request, with its anchor followed to this head (null: none). */
export type PriorConcern = {
  fingerprint: string;
  title: string;
  body: string;
  category: string;
  path: string | null;
  at: { line: number; endLine: number } | null;
};

/** The part of a finding matching reads (and changes). */
export type Matchable = {
  path: string;
  category: string;
  title: string;
  body: string;
  line?: number | null;
  endLine?: number | null;
};

export type CrossPushMatch = {
  /** The index of the new finding. */
  index: number;
  prior: PriorConcern;
  /** The model's title before it took the prior finding's. */
  title: string;
  score: number;
};

function near(f: Matchable, at: PriorConcern['at']): boolean {
  if (at === null || f.line === null || f.line === undefined) return true;
  const end = f.endLine ?? f.line;
  return f.line <= at.endLine + CROSS_PUSH_LINE_TOLERANCE && at.line <= end + CROSS_PUSH_LINE_TOLERANCE;
}

/**
 * The new findings that continue prior findings they do not match exactly, each with the prior finding it
 * continues (see the module comment). `findings` is not changed: `continuePrior` applies a match.
 */
export function matchAcrossPushes(
  findings: readonly Matchable[],
  priors: readonly PriorConcern[],
): CrossPushMatch[] {
  const raised = new Set(findings.map((f) => findingFingerprint(f)));
  const open = priors.filter((p) => p.path !== null && !raised.has(p.fingerprint));
  if (open.length === 0) return [];
  const index = new AlikeIndex(open);
  const taken = new Set<string>();
  const matches: CrossPushMatch[] = [];
  findings.forEach((f, i) => {
    const fingerprint = findingFingerprint(f);
    if (priors.some((p) => p.fingerprint === fingerprint)) return;
    const path = normaliseFindingPath(f.path);
    const found = index.best(f, {
      accept: (p) => !taken.has(p.fingerprint) && normaliseFindingPath(p.path!) === path && near(f, p.at),
    });
    if (!found) return;
    taken.add(found.match.fingerprint);
    matches.push({ index: i, prior: found.match, title: f.title, score: found.score });
  });
  return matches;
}

/** A finding continuing a prior one: the prior finding's title and category (its fingerprint), the rest its own. */
export function continuePrior<T extends Matchable>(finding: T, prior: PriorConcern): T {
  return { ...finding, title: prior.title, category: prior.category };
}
