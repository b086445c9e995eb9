import { botHandlesFromEnv, commandHelpText, parseCommand } from '../../src/commands/parse.js';

describe('comment command parser', () => {
  test.each([
    ['@verdict review', 'review', 'verdict', []],
    ['@reviewbot rerun', 'rerun', 'reviewbot', []],
    ['@VERDICT STATUS', 'status', 'verdict', []],
    ['@Verdict Help', 'help', 'verdict', []],
    ['   @verdict    review   ', 'review', 'verdict', []],
    [
      '@verdict\n\treview\nplease check the parser',
      'review',
      'verdict',
      ['please', 'check', 'the', 'parser'],
    ],
    ['@verdict review, thanks', 'review', 'verdict', ['thanks']],
    ['@verdict review #123 abcdef0', 'review', 'verdict', ['#123', 'abcdef0']],
  ])('%j parses to %s', (body, verb, handle, args) => {
    expect(parseCommand(body)).toEqual({ kind: 'command', verb, handle, args });
  });

  test.each([
    ['@verdict ignore'],
    ['@verdict resolve'],
    ['@verdict learn this'],
    ['@verdict'],
    ['@verdictbot review'],
    ['@verdict-x review'],
    ['please @verdict review'],
    ['verdict review'],
    ['@someone review'],
    [''],
    ['   '],
    [null],
    [undefined],
  ])('%j is no_command', (body) => {
    expect(parseCommand(body as string | null | undefined)).toEqual({ kind: 'no_command' });
  });

  test('custom handles replace the defaults', () => {
    const handles = botHandlesFromEnv(' @Judge , ,ref ');
    expect(handles).toEqual(['judge', 'ref']);
    expect(parseCommand('@judge review', handles)).toMatchObject({ kind: 'command', handle: 'judge' });
    expect(parseCommand('@verdict review', handles)).toEqual({ kind: 'no_command' });
    expect(botHandlesFromEnv('')).toEqual(['verdict', 'reviewbot']);
  });

  test('help text lists the four verbs with the primary handle', () => {
    const text = commandHelpText(['judge']);
    for (const verb of ['review', 'rerun', 'status', 'help']) expect(text).toContain(`@judge ${verb}`);
  });
});
