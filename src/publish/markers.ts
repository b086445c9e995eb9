/**
 * The hidden markers Verdict writes in what it publishes, so that it can find its own publications on a
 * pull request again: after an interrupted attempt (docs/publication.md "Published once"), and to tie a
 * line comment to its finding. A run id is random and unknown before the publication that carries it.
 */

/** Ends every review body of a run. */
export function reviewMarker(runId: string): string {
  return `<!-- verdict:review run=${runId} -->`;
}

/** Ends a reply of a run in a finding's thread ("Resolved in <sha>: ..."). */
export function threadReplyMarker(runId: string, fingerprint: string): string {
  return `<!-- verdict:reply run=${runId} finding=${fingerprint} -->`;
}

/** Ends the answer to a command in a line-comment thread (`@verdict ignore`, `learn`), by the command's id. */
export function feedbackReplyMarker(commandCommentId: number | string): string {
  return `<!-- verdict:reply to=${commandCommentId} -->`;
}

/** Ends the status comment of a run (`statusChecks.postStatusComments`). */
export function statusCommentMarker(runId: string): string {
  return `<!-- verdict:status run=${runId} -->`;
}

/** A text with its marker on a line of its own. */
export function withMarker(text: string, marker: string): string {
  return `${text}\n\n${marker}`;
}

/** Ends a line comment of a finding: ties the comment (and its thread) to the finding's fingerprint. */
export function findingMarker(fingerprint: string): string {
  return `<!-- verdict:finding ${fingerprint} -->`;
}

/** The fingerprint a line comment of Verdict carries, or null. */
export function lineCommentFingerprint(body: string | null | undefined): string | null {
  const m = /<!-- verdict:finding (fp_[0-9a-f]+) -->/.exec(body ?? '');
  return m ? m[1]! : null;
}
