/** Markdown of a review body: model text escaped for GitHub, paths as code, lists and sections. */
import type { SummarySection } from '../policy/policy.schema.js';

/**
 * Model text made safe for a GitHub review body: HTML is escaped (no injected tags or comments),
 * @mentions and team mentions cannot ping anyone, and fenced code blocks are balanced so that a stray
 * fence cannot swallow the rest of the body.
 */
export function escapeText(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let inFence = false;
  const out = lines.map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      return line;
    }
    // Inside a fence GitHub shows text literally: no HTML, no mentions, so nothing to escape.
    return inFence ? line : escapeOutsideCode(line);
  });
  if (inFence) out.push('```');
  return out.join('\n');
}

/** Escapes HTML and mentions outside inline code spans (which GitHub also shows literally). */
function escapeOutsideCode(line: string): string {
  return line
    .split(/(`+[^`]*?`+)/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replace(/&/g, '&amp;')
            .replace(/</g, '&lt;')
            .replace(/>/g, '&gt;')
            .replace(/(^|[^\w`])@(?=[A-Za-z0-9])/g, '$1@\u200b'),
    )
    .join('');
}

/** One line of model text (titles, table cells): newlines folded, pipes escaped. */
export function escapeInline(text: string): string {
  return escapeText(text.replace(/\s*\n\s*/g, ' ').trim())
    .replace(/\|/g, '\\|')
    .replace(/```/g, '`\u200b``');
}

/** `1 finding`, `2 findings`: a count and its noun (`many` when the plural is not the noun and `s`). */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Lines indented two spaces (a list item's continuation); blank lines stay blank. */
export function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => (l === '' ? '' : `  ${l}`))
    .join('\n');
}

/** Model texts as a bulleted list, one line each. */
export function bullets(items: readonly string[]): string {
  return items.map((i) => `- ${escapeInline(i)}`).join('\n');
}

/** A path in inline code, with backticks that cannot close the span early. */
export function codePath(path: string): string {
  const clean = path.replace(/[\r\n]/g, ' ');
  const longest = Math.max(0, ...(clean.match(/`+/g) ?? []).map((m) => m.length));
  const ticks = '`'.repeat(longest + 1);
  // Inline code shows its text literally: GitHub parses neither HTML nor mentions inside it.
  return `${ticks}${longest > 0 ? ' ' : ''}${clean}${longest > 0 ? ' ' : ''}${ticks}`;
}

export function section(title: string, body: string, opts: SummarySection | null): string {
  if (opts && !opts.enabled) return '';
  if (opts?.collapsible) {
    return `<details${opts.defaultOpen ? ' open' : ''}>\n<summary><strong>${title}</strong></summary>\n\n${body}\n\n</details>`;
  }
  return `### ${title}\n\n${body}`;
}
