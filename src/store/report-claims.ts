/** A run's accepted closure claims with their evidence, as the report reads them from its stored analysis. */

type Raw = Record<string, unknown>;

export type ClaimEvidence = { path: string | null; headSha: string | null; quote: string | null };

/** An accepted closure claim a run recorded for a prior finding (review-engine 2.4). */
export type ResolutionClaim = {
  fingerprint: string;
  disposition: string;
  explanation: string | null;
  evidence: ClaimEvidence[];
};

/**
 * The accepted closure claims of a run: `priorFindings.resolved` (what the engine accepted) joined with
 * the evidence of the same fingerprint in `output.priorFindingDispositions`. A claim without a matching
 * disposition keeps an empty evidence list (it will not count as addressed).
 */
export function claimsOf(resolved: unknown, dispositions: unknown): ResolutionClaim[] | null {
  if (!Array.isArray(resolved)) return null;
  const evidenceBy = new Map<string, ClaimEvidence[]>();
  if (Array.isArray(dispositions)) {
    for (const d of dispositions as Raw[]) {
      if (!d || typeof d !== 'object' || typeof d.fingerprint !== 'string') continue;
      const evidence = Array.isArray(d.evidence)
        ? (d.evidence as Raw[])
            .filter((e) => e && typeof e === 'object')
            .map((e) => ({
              path: typeof e.path === 'string' && e.path.trim() !== '' ? e.path : null,
              headSha: typeof e.headSha === 'string' && e.headSha.trim() !== '' ? e.headSha : null,
              quote: typeof e.quote === 'string' && e.quote.trim() !== '' ? e.quote.slice(0, 500) : null,
            }))
            .filter((e) => e.quote !== null)
        : [];
      evidenceBy.set(d.fingerprint, [...(evidenceBy.get(d.fingerprint) ?? []), ...evidence]);
    }
  }
  const claims: ResolutionClaim[] = [];
  for (const r of resolved as Raw[]) {
    if (!r || typeof r !== 'object' || typeof r.fingerprint !== 'string' || r.fingerprint === '') continue;
    claims.push({
      fingerprint: r.fingerprint,
      disposition: typeof r.disposition === 'string' ? r.disposition : 'resolved',
      explanation: typeof r.explanation === 'string' ? r.explanation : null,
      evidence: evidenceBy.get(r.fingerprint) ?? [],
    });
  }
  return claims;
}
