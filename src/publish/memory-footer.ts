import { codePath, plural } from './markdown.js';
import type { MemoryUsed } from './status.js';

/**
 * The review body's footer line naming the memory the model was given (NAMES.md "Memory"): its contexts
 * by id, its knowledge documents by path and its linked issues by number, at most MAX_NAMED of each
 * (then how many more). Null when the review was given none: the body is then as without memory.
 */

/** Ids, paths or issues named per kind; the rest are counted. */
export const MAX_NAMED = 10;

function named(items: readonly string[]): string {
  const shown = items.slice(0, MAX_NAMED).join(', ');
  return items.length > MAX_NAMED ? `${shown} and ${items.length - MAX_NAMED} more` : shown;
}

export function memoryFooter(memory: MemoryUsed | null | undefined): string | null {
  if (!memory) return null;
  const { contexts, knowledge, linkedIssues } = memory;
  const parts = [
    contexts.length > 0 ? `${plural(contexts.length, 'context')} (${named(contexts.map(codePath))})` : null,
    knowledge.length > 0
      ? `${plural(knowledge.length, 'knowledge document')} (${named(knowledge.map(codePath))})`
      : null,
    linkedIssues.length > 0
      ? `${plural(linkedIssues.length, 'linked issue')} (${named(linkedIssues.map((n) => `#${n}`))})`
      : null,
  ].filter((p) => p !== null);
  return parts.length === 0 ? null : `<sub>Memory: ${parts.join(', ')}.</sub>`;
}
