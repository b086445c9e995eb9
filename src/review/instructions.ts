import { parse as parseYaml } from 'yaml';
import { globMatch } from '../policy/matcher.js';
import { clipPatch } from './context.js';
import { fileReader } from './gather.js';
import type { GitHubClient } from '../github/client.js';

/**
 * Repository instructions (the review issue, item 5): the instruction files teams already keep, read from
 * the pull request's base branch (a pull request must not rewrite its own review rules). `AGENTS.md`,
 * `CLAUDE.md`, `REVIEW.md` and `.cursorrules` apply to the files under their directory;
 * `.github/copilot-instructions.md` to every file; `.github/instructions/*.instructions.md` to the files
 * their `applyTo` globs match. Only files that apply to a changed path are read.
 */

/** Instruction files that apply to the files under their own directory. */
export const DIRECTORY_INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md', 'REVIEW.md', '.cursorrules'] as const;
export const COPILOT_INSTRUCTIONS = '.github/copilot-instructions.md';
const SCOPED_INSTRUCTIONS = /^\.github\/instructions\/[^/]+\.instructions\.md$/;

/** Tokens one instruction file may take, and all of them together. */
export const INSTRUCTION_FILE_TOKENS = 2000;
export const INSTRUCTIONS_TOTAL_TOKENS = 6000;
/** Instruction files read at most (the nearest to the changed files first). */
const MAX_FILES = 20;

export type InstructionFile = {
  path: string;
  /** Which files it applies to, in words: `every file`, `files under src/api/`, `**\/*.ts`. */
  appliesTo: string;
  text: string;
};

export type RepositoryInstructions = {
  files: InstructionFile[];
  /** Why something was not used (a failed read, the budget), for the run's warnings. */
  notes: string[];
};

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** The `applyTo` globs of a `.instructions.md` file's front matter, and its text without it. */
export function splitFrontMatter(text: string): { applyTo: string[] | null; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!m) return { applyTo: null, body: text };
  let applyTo: string[] | null = null;
  try {
    const meta = parseYaml(m[1]!) as { applyTo?: unknown } | null;
    const raw = meta?.applyTo;
    if (typeof raw === 'string')
      applyTo = raw
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
    else if (Array.isArray(raw)) applyTo = raw.filter((g): g is string => typeof g === 'string');
  } catch {
    applyTo = null;
  }
  return { applyTo, body: text.slice(m[0].length) };
}

type TreeEntry = { path?: string; type?: string };

/** Reads the instruction files that apply to `changedPaths` from `baseRef`. Never throws: failures are notes. */
export async function readInstructions(
  gh: GitHubClient,
  owner: string,
  repo: string,
  baseRef: string,
  changedPaths: readonly string[],
): Promise<RepositoryInstructions> {
  const notes: string[] = [];
  let paths: string[];
  try {
    const { data } = await gh.rest.git.getTree({ owner, repo, tree_sha: baseRef, recursive: 'true' });
    paths = ((data.tree ?? []) as TreeEntry[])
      .filter((e) => e.type === 'blob' && typeof e.path === 'string')
      .map((e) => e.path!);
    if (data.truncated)
      notes.push(`the tree of ${baseRef} is too large to list whole: some instruction files may be missed`);
  } catch (error) {
    const message = (error as Error)?.message ?? String(error);
    return { files: [], notes: [`repository instructions could not be listed on ${baseRef}: ${message}`] };
  }
  const applies = (dir: string) => dir === '' || changedPaths.some((p) => p.startsWith(`${dir}/`));
  const candidates: Array<{ path: string; appliesTo: string | null; depth: number }> = [];
  for (const path of paths) {
    const base = path.slice(path.lastIndexOf('/') + 1);
    if ((DIRECTORY_INSTRUCTION_FILES as readonly string[]).includes(base)) {
      const dir = dirOf(path);
      if (applies(dir)) {
        candidates.push({
          path,
          appliesTo: dir === '' ? 'every file' : `files under ${dir}/`,
          depth: dir === '' ? 0 : dir.split('/').length + 1,
        });
      }
    } else if (path === COPILOT_INSTRUCTIONS) {
      candidates.push({ path, appliesTo: 'every file', depth: 0 });
    } else if (SCOPED_INSTRUCTIONS.test(path)) {
      candidates.push({ path, appliesTo: null, depth: 1 });
    }
  }
  // Repository-wide files first, then the nearer a directory the later (the most specific last).
  candidates.sort((a, b) => a.depth - b.depth || (a.path < b.path ? -1 : 1));
  if (candidates.length > MAX_FILES)
    notes.push(`${candidates.length - MAX_FILES} instruction file(s) beyond ${MAX_FILES} not read`);
  const read = fileReader(gh, owner, repo, baseRef);
  const files: InstructionFile[] = [];
  let total = 0;
  for (const c of candidates.slice(0, MAX_FILES)) {
    let text: string | null;
    try {
      text = await read(c.path);
    } catch (error) {
      notes.push(`${c.path} could not be read: ${(error as Error)?.message ?? String(error)}`);
      continue;
    }
    if (text === null || text.trim() === '') continue;
    let appliesTo = c.appliesTo;
    if (appliesTo === null) {
      const { applyTo, body } = splitFrontMatter(text);
      const globs = applyTo ?? ['**'];
      if (!changedPaths.some((p) => globs.some((g) => globMatch(g, p)))) continue;
      appliesTo = applyTo ? applyTo.join(', ') : 'every file';
      text = body;
    }
    const clipped = clipPatch(
      text.trim(),
      Math.min(INSTRUCTION_FILE_TOKENS, INSTRUCTIONS_TOTAL_TOKENS - total),
    );
    if (clipped.tokens <= 0 || total >= INSTRUCTIONS_TOTAL_TOKENS) {
      notes.push(
        `${c.path} left out: the instructions' budget of ${INSTRUCTIONS_TOTAL_TOKENS} tokens is used`,
      );
      continue;
    }
    total += clipped.tokens;
    files.push({ path: c.path, appliesTo, text: clipped.text });
  }
  return { files, notes };
}
