import type { Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import { badRequest, notFound, OperatorError } from './operation.js';

/** The shortest head a review key may abbreviate to (as `git` abbreviates a commit: 7 characters). */
export const MIN_HEAD_ABBREVIATION = 7;

/** The head as a key writes it: the hex digits after `@`, before any `:variant`. */
const HEAD = /@([0-9a-fA-F]+)(?::|$)/;

/**
 * The run a review key names (NAMES.md, "First run and the command line"): the run with exactly that key;
 * else, when the key's head is abbreviated to at least 7 hex digits (`acme/web#12@1a2b3c4`, what
 * `verdict runs` prints), the one run of that pull request and variant whose head starts with them.
 * Refusals: a head under 7 digits is 400 `invalid_request`; several matches are 409
 * `ambiguous_review_key`, naming each candidate; no match is 404 `not_found`.
 */
export async function findRun(store: Store, key: string): Promise<RunRecord> {
  const exact = await store.runs.getByKey(key);
  if (exact) return exact;
  const head = HEAD.exec(key)?.[1];
  if (head !== undefined && head.length < MIN_HEAD_ABBREVIATION) {
    throw badRequest(
      `review key ${key} abbreviates the head to ${head.length} characters: give at least ${MIN_HEAD_ABBREVIATION}`,
    );
  }
  const matches = head !== undefined ? await store.runs.withAbbreviatedHead(key) : [];
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    const candidates = matches.map((run) => run.reviewKey);
    throw new OperatorError(
      409,
      'ambiguous_review_key',
      `review key ${key} is ambiguous: it matches ${candidates.join(', ')} (give more of the head)`,
      { candidates },
    );
  }
  throw notFound(`no run with review key ${key}`);
}

/** The run a review key names (`findRun`), its findings and what was published for it (`verdict show`). */
export async function runDetail(store: Store, key: string) {
  const run = await findRun(store, key);
  const findings = await store.findings.listForRun(run.id);
  const published = await store.publications.listForPr(run.repo, run.prNumber);
  return { run, findings, publications: published.filter((p) => p.runId === run.id) };
}

export type RunDetail = Awaited<ReturnType<typeof runDetail>>;
