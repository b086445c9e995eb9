import {
  botHandlesFromEnv,
  commandHelpText,
  DEFAULT_BOT_HANDLES,
  parseCommand,
} from '../../src/comment-commands/parse.js';

describe('parseCommand: commands (review-engine 4.7)', () => {
  test.each<[string, string, string, string[]]>([
    // both default handles, each verb
    ['@verdict review', 'review', 'verdict', []],
    ['@verdict rerun', 'rerun', 'verdict', []],
    ['@verdict status', 'status', 'verdict', []],
    ['@verdict help', 'help', 'verdict', []],
    ['@reviewbot review', 'review', 'reviewbot', []],
    ['@reviewbot rerun', 'rerun', 'reviewbot', []],
    ['@reviewbot status', 'status', 'reviewbot', []],
    ['@reviewbot help', 'help', 'reviewbot', []],
    // case-insensitive handle and verb; the handle is reported lower-cased
    ['@VERDICT STATUS', 'status', 'verdict', []],
    ['@Verdict Help', 'help', 'verdict', []],
    ['@ReviewBot ReRun', 'rerun', 'reviewbot', []],
    // leading whitespace is trimmed, any whitespace between words is collapsed
    ['   @verdict    review   ', 'review', 'verdict', []],
    ['\n\n\t@verdict review', 'review', 'verdict', []],
    ['@verdict\treview', 'review', 'verdict', []],
    ['@verdict\nreview', 'review', 'verdict', []],
    ['@verdict \r\n \t review', 'review', 'verdict', []],
    // trailing text becomes args, split on any whitespace
    [
      '@verdict\n\treview\nplease check the parser',
      'review',
      'verdict',
      ['please', 'check', 'the', 'parser'],
    ],
    ['@verdict review #123 abcdef0', 'review', 'verdict', ['#123', 'abcdef0']],
    ['@verdict status   now\n\nplease  ', 'status', 'verdict', ['now', 'please']],
    ['@verdict review @verdict help', 'review', 'verdict', ['@verdict', 'help']],
    // punctuation glued to the verb (.,!:;) is dropped
    ['@verdict review, thanks', 'review', 'verdict', ['thanks']],
    ['@verdict help!', 'help', 'verdict', []],
    ['@verdict status.', 'status', 'verdict', []],
    ['@verdict rerun: flaky run', 'rerun', 'verdict', ['flaky', 'run']],
    ['@verdict review;', 'review', 'verdict', []],
    ['@verdict review!!!', 'review', 'verdict', []],
  ])('%j parses to %s', (body, verb, handle, args) => {
    expect(parseCommand(body)).toEqual({ kind: 'command', verb, handle, args });
  });

  test('args are plain words: a PR number or SHA in them is not interpreted', () => {
    const parsed = parseCommand('@verdict review #999 deadbeefdeadbeef');
    expect(parsed).toEqual({
      kind: 'command',
      verb: 'review',
      handle: 'verdict',
      args: ['#999', 'deadbeefdeadbeef'],
    });
    expect(Object.keys(parsed).sort()).toEqual(['args', 'handle', 'kind', 'verb']);
  });
});

describe('parseCommand: no_command', () => {
  test.each<[string | null | undefined]>([
    // other verbs
    ['@verdict ignore'],
    ['@verdict resolve'],
    ['@verdict learn this'],
    ['@verdict approve'],
    // a verb that only starts like one, or with other punctuation glued to it
    ['@verdict reviews'],
    ['@verdict review-all'],
    ['@verdict review?'],
    ['@verdict re view'],
    ['@verdict ,review'],
    // no verb at all
    ['@verdict'],
    ['@verdict   \n\t '],
    ['@reviewbot'],
    // the handle must end at whitespace
    ['@verdictbot review'],
    ['@verdictx review'],
    ['@verdict-x review'],
    ['@verdict, review'],
    ['@verdict: review'],
    ['@reviewbots review'],
    // not at the start
    ['please @verdict review'],
    ['> @verdict review'],
    ['thanks!\n@verdict review'],
    ['`@verdict review`'],
    // not a handle
    ['verdict review'],
    ['@ verdict review'],
    ['@@verdict review'],
    ['@someone review'],
    ['@ review'],
    // empty, missing
    [''],
    ['   '],
    ['\n\t'],
    [null],
    [undefined],
  ])('%j is no_command', (body) => {
    expect(parseCommand(body)).toEqual({ kind: 'no_command' });
  });
});

describe('custom handles', () => {
  test('a custom list replaces the defaults', () => {
    const handles = ['judge', 'ref'];
    expect(parseCommand('@judge review', handles)).toEqual({
      kind: 'command',
      verb: 'review',
      handle: 'judge',
      args: [],
    });
    expect(parseCommand('@REF status', handles)).toMatchObject({
      kind: 'command',
      handle: 'ref',
      verb: 'status',
    });
    expect(parseCommand('@verdict review', handles)).toEqual({ kind: 'no_command' });
    expect(parseCommand('@reviewbot review', handles)).toEqual({ kind: 'no_command' });
    expect(parseCommand('@judgement review', handles)).toEqual({ kind: 'no_command' });
  });

  test('configured handles are compared without case or a leading @', () => {
    expect(parseCommand('@judge help', ['@Judge'])).toMatchObject({ kind: 'command', handle: 'judge' });
  });

  test('an empty handle list accepts nothing', () => {
    expect(parseCommand('@verdict review', [])).toEqual({ kind: 'no_command' });
  });

  test('the default list is verdict, reviewbot', () => {
    expect(DEFAULT_BOT_HANDLES).toEqual(['verdict', 'reviewbot']);
  });
});

describe('botHandlesFromEnv (VERDICT_BOT_HANDLES)', () => {
  test.each<[string | undefined, string[]]>([
    [undefined, ['verdict', 'reviewbot']],
    ['', ['verdict', 'reviewbot']],
    ['  ', ['verdict', 'reviewbot']],
    [' , ,', ['verdict', 'reviewbot']],
    ['verdict', ['verdict']],
    ['verdict,reviewbot', ['verdict', 'reviewbot']],
    [' @Judge , ,ref ', ['judge', 'ref']],
    ['@@x', ['@x']],
    ['Bot,bot', ['bot']],
  ])('%j → %j', (value, expected) => {
    expect(botHandlesFromEnv(value)).toEqual(expected);
  });

  test('returns a fresh array, not the shared defaults', () => {
    const handles = botHandlesFromEnv(undefined);
    handles.push('x');
    expect(botHandlesFromEnv(undefined)).toEqual(['verdict', 'reviewbot']);
    expect(DEFAULT_BOT_HANDLES).toEqual(['verdict', 'reviewbot']);
  });

  test('the parsed list is usable by parseCommand', () => {
    expect(parseCommand('@judge rerun', botHandlesFromEnv('@Judge'))).toMatchObject({
      kind: 'command',
      handle: 'judge',
      verb: 'rerun',
    });
  });
});

describe('commandHelpText', () => {
  test.each(['review', 'rerun', 'status', 'help'])('lists `@verdict %s` by default', (verb) => {
    expect(commandHelpText()).toContain(`\`@verdict ${verb}\``);
  });

  test('uses the primary (first) handle for the commands and names the others', () => {
    const text = commandHelpText(['Judge', 'ref']);
    for (const verb of ['review', 'rerun', 'status', 'help']) expect(text).toContain(`\`@judge ${verb}\``);
    expect(text).not.toContain('@ref review');
    expect(text).toContain('`@ref`');
    expect(text).not.toContain('@verdict');
  });

  test('default help names @reviewbot as an alternative, not as the primary', () => {
    const text = commandHelpText();
    expect(text).not.toContain('@reviewbot review');
    expect(text).toContain('`@reviewbot`');
  });

  test('every command it documents parses back to that verb', () => {
    const handles = ['judge'];
    const documented = [...commandHelpText(handles).matchAll(/`(@judge \w+)`/g)].map((m) => m[1]);
    expect(documented).toHaveLength(4);
    expect(documented.map((c) => parseCommand(c, handles))).toEqual(
      ['review', 'rerun', 'status', 'help'].map((verb) => ({
        kind: 'command',
        verb,
        handle: 'judge',
        args: [],
      })),
    );
  });
});
