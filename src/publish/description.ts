import { bullets, escapeInline, escapeText } from './markdown.js';
import { MERGE_STATUS_BADGE, type RenderInput } from './render.js';
import { mergeStatus } from './status.js';

/** The PR description's summary block (docs/publication.md "PR description"). */
export const SUMMARY_START = '<!-- verdict:summary:start -->';
export const SUMMARY_END = '<!-- verdict:summary:end -->';

/** The short summary written into the PR description between the markers. */
export function renderDescriptionSummary(input: RenderInput): string {
  const status = mergeStatus(input);
  return [
    `### ${escapeInline(input.productName)} summary`,
    `**Merge Status: ${MERGE_STATUS_BADGE[status]}**`,
    escapeText(input.output.overview.trim()),
    bullets(input.output.bulletHighlights),
  ]
    .filter((p) => p !== '')
    .join('\n\n');
}

/**
 * The PR body with the summary between the review-summary markers: only what is between them is replaced;
 * without markers the block is appended after the author's text, which is never changed.
 */
export function withDescriptionSummary(body: string | null, summary: string): string {
  const current = body ?? '';
  const block = `${SUMMARY_START}\n${summary}\n${SUMMARY_END}`;
  const start = current.indexOf(SUMMARY_START);
  const end = start === -1 ? -1 : current.indexOf(SUMMARY_END, start);
  if (start !== -1 && end !== -1) {
    return current.slice(0, start) + block + current.slice(end + SUMMARY_END.length);
  }
  return current.trim() === '' ? block : `${current.replace(/\s+$/, '')}\n\n${block}`;
}
