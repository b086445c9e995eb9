/**
 * Evidence artifacts in a review body (review-engine 2.6): one Markdown list item per artifact, its kind and
 * a link to it, or its storage key as code when it has no URL:
 *
 *     - command_output: [runs/r1/local-1-test.log](https://…/runs/r1/local-1-test.log)
 *     - command_output: `runs/r1/local-1-test.log`
 *
 * Keys and kinds are escaped so they cannot open Markdown or HTML of their own; a URL that is not http(s)
 * is not linked (the key is shown instead).
 */
import type { EvidenceArtifact } from './artifacts.js';

/** Text with Markdown's and HTML's active characters backslash-escaped, on one line. */
export function escapeMarkdownText(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/[\\`*_[\]()<>|~&]/g, '\\$&');
}

/** `text` as an inline code span, fenced with more backticks than it holds (CommonMark 6.1). */
export function codeSpan(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') || /^ .* $/.test(flat) ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** An http(s) URL made safe as a Markdown link destination, or null for any other (or invalid) URL. */
export function linkDestination(url: string): string | null {
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) return null;
  return new URL(url).href.replace(/[ ()<>"'`\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function kindText(kind: string): string {
  return /^[a-z][a-z0-9_]*$/.test(kind) ? kind : escapeMarkdownText(kind);
}

/** The Markdown list of the artifacts (empty string for none). */
export function renderEvidence(artifacts: EvidenceArtifact[]): string {
  return artifacts
    .map((artifact) => {
      const target = artifact.url === null ? null : linkDestination(artifact.url);
      const shown =
        target === null ? codeSpan(artifact.key) : `[${escapeMarkdownText(artifact.key)}](${target})`;
      return `- ${kindText(artifact.kind)}: ${shown}`;
    })
    .join('\n');
}
