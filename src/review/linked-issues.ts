import type { GitHubClient } from '../github/client.js';
import { mapConcurrent } from './concurrency.js';
import { errorText } from './stage.js';

/**
 * The `linked-issues` integration (NAMES.md "Memory"): the title and body of the issues a pull request's
 * body closes or references (`linkedIssueNumbers`), read from GitHub with the installation's Octokit
 * (`GET /repos/{owner}/{repo}/issues/{number}`). A number that is a pull request, that GitHub does not
 * have, or whose read fails is skipped with its reason; the first MAX_GIVEN_ISSUES issues are kept, each
 * body cut to MAX_ISSUE_BYTES. docs/memory.md describes it for operators.
 */

/** Most linked issues one review is given (the first ones the body names). */
export const MAX_GIVEN_ISSUES = 5;
/** Most UTF-8 bytes of one issue's body given to the model; the rest is cut with a marker. */
export const MAX_ISSUE_BYTES = 4000;
/** Most characters of an issue's title (GitHub allows 256). */
const MAX_TITLE_CHARS = 300;

export type LinkedIssue = {
  number: number;
  /** `open` or `closed`. */
  state: string;
  title: string;
  body: string;
  /** The body was cut to MAX_ISSUE_BYTES. */
  clipped: boolean;
};

/** A referenced number that is not given, and why (`pull request`, `not found`, or the failed read). */
export type SkippedIssue = { number: number; reason: string };

export type LinkedIssues = {
  issues: LinkedIssue[];
  skipped: SkippedIssue[];
  /** Referenced numbers not read because MAX_GIVEN_ISSUES issues were found before them. */
  unread: number;
};

/** `text` cut to at most `max` UTF-8 bytes at a character boundary, with whether it was cut. */
export function cutToBytes(text: string, max: number): { text: string; cut: boolean; bytes: number } {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= max) return { text, cut: false, bytes: buffer.length };
  // A character split at the cut decodes as U+FFFD: drop it.
  const kept = buffer
    .subarray(0, max)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
  return { text: kept, cut: true, bytes: buffer.length };
}

type Read = { issue: LinkedIssue } | { skipped: SkippedIssue };

async function readIssue(gh: GitHubClient, owner: string, repo: string, number: number): Promise<Read> {
  try {
    const { data } = await gh.rest.issues.get({ owner, repo, issue_number: number });
    if (data.pull_request) return { skipped: { number, reason: 'pull request' } };
    const body = cutToBytes((data.body ?? '').trim(), MAX_ISSUE_BYTES);
    const text = body.cut
      ? `${body.text}\n… [cut by Verdict: ${body.bytes - Buffer.byteLength(body.text)} more byte(s) of this issue not shown]`
      : body.text;
    const title = (data.title ?? '').slice(0, MAX_TITLE_CHARS);
    return { issue: { number, state: data.state ?? 'open', title, body: text, clipped: body.cut } };
  } catch (error) {
    const status = (error as { status?: unknown })?.status;
    if (status === 404 || status === 410) return { skipped: { number, reason: 'not found' } };
    const why = typeof status === 'number' ? `GitHub answered ${status}` : errorText(error);
    return { skipped: { number, reason: `could not be read: ${why}` } };
  }
}

/**
 * Reads the referenced issues in the order the body names them, MAX_GIVEN_ISSUES at a time, until
 * MAX_GIVEN_ISSUES issues are found or the numbers run out. Never throws: a failed read is a skipped
 * number with its reason.
 */
export async function readLinkedIssues(
  gh: GitHubClient,
  owner: string,
  repo: string,
  numbers: readonly number[],
): Promise<LinkedIssues> {
  const issues: LinkedIssue[] = [];
  const skipped: SkippedIssue[] = [];
  let next = 0;
  while (next < numbers.length && issues.length < MAX_GIVEN_ISSUES) {
    const batch = numbers.slice(next, next + MAX_GIVEN_ISSUES - issues.length);
    next += batch.length;
    const reads = await mapConcurrent(batch, batch.length, (n) => readIssue(gh, owner, repo, n));
    for (const read of reads) {
      if ('issue' in read) issues.push(read.issue);
      else skipped.push(read.skipped);
    }
  }
  return { issues, skipped, unread: numbers.length - next };
}
