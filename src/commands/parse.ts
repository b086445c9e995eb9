/** `@verdict <verb> [args]` comment commands (review-engine 4.7): a pure parser. */
export type CommandVerb = 'review' | 'rerun' | 'status' | 'help';
export type ParsedCommand =
  { kind: 'command'; verb: CommandVerb; handle: string; args: string[] } | { kind: 'no_command' };

export const DEFAULT_BOT_HANDLES: readonly string[] = ['verdict', 'reviewbot'];
const VERBS = new Set<string>(['review', 'rerun', 'status', 'help']);

export function botHandlesFromEnv(value: string | undefined): string[] {
  const handles = (value ?? '')
    .split(',')
    .map((h) => h.trim().replace(/^@/, '').toLowerCase())
    .filter((h) => h.length > 0);
  return handles.length > 0 ? handles : [...DEFAULT_BOT_HANDLES];
}

/**
 * The comment must start (after leading whitespace) with `@<handle>`, then whitespace, then one verb;
 * case-insensitive, any whitespace collapsed. Trailing text becomes `args`, which never select another PR
 * or head. Trailing punctuation glued to the verb (`review,` `help!`) is ignored. Anything else,
 * including a handle in the middle of a sentence, is `no_command`.
 */
export function parseCommand(
  body: string | null | undefined,
  handles: readonly string[] = DEFAULT_BOT_HANDLES,
): ParsedCommand {
  if (typeof body !== 'string') return { kind: 'no_command' };
  const words = body.trim().split(/\s+/).filter(Boolean);
  const first = words[0]?.toLowerCase();
  if (!first || !first.startsWith('@')) return { kind: 'no_command' };
  const handle = first.slice(1);
  if (!handles.map((h) => h.toLowerCase()).includes(handle)) return { kind: 'no_command' };
  const verb = words[1]?.toLowerCase().replace(/[.,!:;]+$/, '');
  if (!verb || !VERBS.has(verb)) return { kind: 'no_command' };
  return { kind: 'command', verb: verb as CommandVerb, handle, args: words.slice(2) };
}

export function commandHelpText(handles: readonly string[] = DEFAULT_BOT_HANDLES): string {
  const h = `@${handles[0] ?? 'verdict'}`;
  return [
    '**Verdict commands**',
    '',
    `- \`${h} review\`: queue a fresh review of the current head`,
    `- \`${h} rerun\`: same as review`,
    `- \`${h} status\`: show the latest review run and the head it is on`,
    `- \`${h} help\`: show this list`,
  ].join('\n');
}
