/** `@verdict <verb> [args]` comment commands (review-engine 4.7): a pure parser. */
export type CommandVerb = 'review' | 'rerun' | 'status' | 'help';
export type ParsedCommand =
  { kind: 'command'; verb: CommandVerb; handle: string; args: string[] } | { kind: 'no_command' };

/** `@verdict` and the legacy `@reviewbot` (NAMES.md); `VERDICT_BOT_HANDLES` replaces the list. */
export const DEFAULT_BOT_HANDLES: readonly string[] = Object.freeze(['verdict', 'reviewbot']);

const VERBS: ReadonlySet<string> = new Set<CommandVerb>(['review', 'rerun', 'status', 'help']);

/** Punctuation glued to the end of the verb that is still read as the verb: `review,` `help!` `status.` */
const VERB_TRAILING_PUNCTUATION = /[.,!:;]+$/;

const NO_COMMAND: ParsedCommand = Object.freeze({ kind: 'no_command' });

/** A handle as configured or as typed: trimmed, lower-cased, without a leading `@`. */
function normalizeHandle(handle: string): string {
  return handle.trim().replace(/^@/, '').toLowerCase();
}

/**
 * `VERDICT_BOT_HANDLES=verdict,reviewbot`: a comma list; entries are trimmed, lower-cased and lose a leading
 * `@`; empty entries are dropped. Unset, empty or only commas → the defaults.
 */
export function botHandlesFromEnv(value: string | undefined): string[] {
  const handles = (value ?? '')
    .split(',')
    .map(normalizeHandle)
    .filter((h) => h.length > 0);
  return handles.length > 0 ? [...new Set(handles)] : [...DEFAULT_BOT_HANDLES];
}

/**
 * Parses a pull-request comment body.
 *
 * - After leading whitespace the body must START with `@<handle>` (one of `handles`, case-insensitive). The
 *   handle ends at whitespace: `@verdictbot review`, `@verdict-x review` and `@verdict, review` are not
 *   commands for handle `verdict`.
 * - Then whitespace (spaces, tabs, newlines; any amount, collapsed) and exactly one verb among review, rerun,
 *   status, help (case-insensitive).
 * - Decision on punctuation: trailing `.`, `,`, `!`, `:` or `;` glued to the verb is dropped, so
 *   `@verdict review, please` is a review command (people write like that). Anything else glued to the verb
 *   (`review?`, `review-all`, `reviews`) makes it another word, hence `no_command`.
 * - The rest, split on whitespace, is `args`: informational only. Args never select another PR or head.
 * - Other verbs (ignore, resolve, learn, ...), a bare handle, a handle in the middle of the text (including a
 *   quoted `> @verdict review`), an empty or missing body: `no_command`.
 *
 * `handle` in the result is the configured handle that matched, lower-cased, without `@`.
 */
export function parseCommand(
  body: string | null | undefined,
  handles: readonly string[] = DEFAULT_BOT_HANDLES,
): ParsedCommand {
  if (typeof body !== 'string') return NO_COMMAND;
  const words = body.trim().split(/\s+/);
  const first = words[0];
  if (first === undefined || !first.startsWith('@')) return NO_COMMAND;
  const handle = first.slice(1).toLowerCase();
  if (handle.length === 0 || !handles.some((h) => normalizeHandle(h) === handle)) return NO_COMMAND;
  const verb = words[1]?.toLowerCase().replace(VERB_TRAILING_PUNCTUATION, '');
  if (verb === undefined || !VERBS.has(verb)) return NO_COMMAND;
  return { kind: 'command', verb: verb as CommandVerb, handle, args: words.slice(2) };
}

/** The `help` reply: Markdown listing the four commands with the primary (first) handle. */
export function commandHelpText(handles: readonly string[] = DEFAULT_BOT_HANDLES): string {
  const normalized = [...new Set(handles.map(normalizeHandle).filter((h) => h.length > 0))];
  const primary = `@${normalized[0] ?? DEFAULT_BOT_HANDLES[0]}`;
  const lines = [
    '**Verdict commands**',
    '',
    `- \`${primary} review\`: queue a fresh review of the pull request's current head`,
    `- \`${primary} rerun\`: same as review`,
    `- \`${primary} status\`: show the latest review run and the stored head`,
    `- \`${primary} help\`: show this list`,
    '',
    'The command must start the comment. Text after the command is ignored: it never selects another pull ' +
      'request or commit.',
  ];
  const others = normalized.slice(1).map((h) => `\`@${h}\``);
  if (others.length > 0) lines.push(`${others.join(', ')} ${others.length > 1 ? 'work' : 'works'} too.`);
  return lines.join('\n');
}

/** What a reply in one of Verdict's line-comment threads asks (NAMES.md "Feedback and learning"). */
export type ThreadCommand =
  | { kind: 'thread_command'; verb: 'ignore'; handle: string }
  | { kind: 'thread_command'; verb: 'learn'; handle: string; text: string }
  | { kind: 'no_command' };

const THREAD_VERBS: ReadonlySet<string> = new Set(['ignore', 'learn']);
const NO_THREAD_COMMAND: ThreadCommand = Object.freeze({ kind: 'no_command' });

/**
 * Parses a reply in a line-comment thread: after leading whitespace, `@<handle>` (as `parseCommand`
 * reads it), whitespace and `ignore` or `learn` (case-insensitive; trailing `.`, `,`, `!`, `:` or `;`
 * glued to the verb is dropped). For `learn` the rest of the body, trimmed, with its line breaks, is the
 * text to learn (it may be empty: the handler answers how to use it). Text after `ignore` is a reason
 * for people and is not read. Anything else, the top-level verbs included, is `no_command`: those are
 * commands of top-level comments only (`parseCommand`), and these two verbs are replies only.
 */
export function parseThreadCommand(
  body: string | null | undefined,
  handles: readonly string[] = DEFAULT_BOT_HANDLES,
): ThreadCommand {
  if (typeof body !== 'string') return NO_THREAD_COMMAND;
  const m = /^\s*@(\S+)\s+(\S+)/u.exec(body);
  if (!m) return NO_THREAD_COMMAND;
  const handle = m[1]!.toLowerCase();
  if (!handles.some((h) => normalizeHandle(h) === handle)) return NO_THREAD_COMMAND;
  const verb = m[2]!.toLowerCase().replace(VERB_TRAILING_PUNCTUATION, '');
  if (!THREAD_VERBS.has(verb)) return NO_THREAD_COMMAND;
  if (verb === 'ignore') return { kind: 'thread_command', verb, handle };
  return { kind: 'thread_command', verb: 'learn', handle, text: body.slice(m[0].length).trim() };
}
