import { normaliseFindingPath } from './fingerprint.js';
import { cachedReader } from './concurrency.js';
import type { Disposition, DispositionEvidence } from './output.schema.js';

/**
 * Checks the model's `priorFindingDispositions` (review-engine 2.4). A closure claim (`resolved`,
 * `false_positive`, `no_longer_applicable`) is accepted only with evidence: it names a fingerprint of a
 * prior finding and quotes code that is present at the current head. A claim that is not supported
 * leaves the concern open: it adds a missing-validation entry and caps the analyst confidence at 3.
 */

/** Contents of a file at the current head, `null` when it is absent there. */
export type FileAtHead = (path: string) => Promise<string | null>;

export type DispositionReview = {
  accepted: Disposition[];
  rejected: Array<{ disposition: Disposition; reason: string }>;
  missingValidations: string[];
  confidenceCap: number | null;
};

/** A quote must carry at least this many non-whitespace characters to count as evidence. */
export const MIN_QUOTE_NON_SPACE_CHARS = 8;

/** The confidence cap when any closure claim is not accepted. */
export const UNRESOLVED_CONFIDENCE_CAP = 3;

/** Collapses every whitespace run to one space and trims, so that re-indented code still matches. */
export function normaliseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function shortSha(sha: string): string {
  return sha.trim().slice(0, 12);
}

/** `null` when the evidence item supports the claim, otherwise why not. */
async function checkEvidence(
  evidence: DispositionEvidence,
  headSha: string,
  read: (path: string) => Promise<{ content: string | null; error: string | null }>,
): Promise<string | null> {
  if (evidence.headSha.trim().toLowerCase() !== headSha.trim().toLowerCase()) {
    return `it quotes head ${shortSha(evidence.headSha) || '(none)'}, not the current head ${shortSha(headSha)}`;
  }
  const quote = normaliseWhitespace(evidence.quote);
  if (quote.replace(/\s/g, '').length < MIN_QUOTE_NON_SPACE_CHARS) {
    return `its quote is empty or shorter than ${MIN_QUOTE_NON_SPACE_CHARS} non-space characters`;
  }
  const path = normaliseFindingPath(evidence.path);
  if (path === '') return 'it names no file';
  const file = await read(path);
  if (file.error !== null) return `${path} could not be read at the current head (${file.error})`;
  if (file.content === null) return `${path} does not exist at the current head`;
  if (!file.content.includes(quote)) return `its quote does not occur in ${path} at the current head`;
  return null;
}

/**
 * Accepts a disposition when its fingerprint is one of `priorFingerprints` and at least one evidence item
 * has `headSha` equal to the current head (case-insensitive) and a whitespace-normalised quote of at
 * least `MIN_QUOTE_NON_SPACE_CHARS` non-space characters that occurs in that file at the current head.
 * Every other disposition is rejected, with a missing-validation entry naming its fingerprint and the
 * reason; any rejection sets `confidenceCap` to 3. `fileAtHead` is called at most once per path, with the
 * normalised path; a throwing `fileAtHead` rejects the evidence, it does not fail the review.
 */
export async function reviewDispositions(
  dispositions: Disposition[],
  ctx: { headSha: string; priorFingerprints: ReadonlySet<string>; fileAtHead: FileAtHead },
): Promise<DispositionReview> {
  // Each path is read once, whitespace-normalised; a failed read is the reason its evidence fails.
  const read = cachedReader((path) =>
    ctx.fileAtHead(path).then(
      (content) => ({ content: content === null ? null : normaliseWhitespace(content), error: null }),
      (err: unknown) => ({ content: null, error: err instanceof Error ? err.message : String(err) }),
    ),
  );
  const accepted: Disposition[] = [];
  const rejected: DispositionReview['rejected'] = [];
  const missingValidations: string[] = [];

  for (const disposition of dispositions) {
    let reason: string | null = null;
    if (!ctx.priorFingerprints.has(disposition.fingerprint)) {
      reason = 'the fingerprint is not a finding of a prior review of this pull request';
    } else if (disposition.evidence.length === 0) {
      reason = 'no evidence from the current head was given';
    } else {
      const problems: string[] = [];
      for (const [index, evidence] of disposition.evidence.entries()) {
        const problem = await checkEvidence(evidence, ctx.headSha, read);
        if (problem === null) {
          problems.length = 0;
          break;
        }
        problems.push(`evidence ${index + 1}: ${problem}`);
      }
      if (problems.length > 0) reason = `no evidence holds at the current head (${problems.join('; ')})`;
    }

    if (reason === null) {
      accepted.push(disposition);
      continue;
    }
    rejected.push({ disposition, reason });
    missingValidations.push(
      `Prior finding ${disposition.fingerprint || '(no fingerprint)'} stays open: its ` +
        `"${disposition.disposition}" claim was not accepted because ${reason}.`,
    );
  }

  return {
    accepted,
    rejected,
    missingValidations,
    confidenceCap: rejected.length > 0 ? UNRESOLVED_CONFIDENCE_CAP : null,
  };
}

/** The score limited by a cap; an absent cap leaves it unchanged. */
export function applyConfidenceCap(score: number, cap: number | null | undefined): number {
  return cap === null || cap === undefined ? score : Math.min(score, cap);
}
