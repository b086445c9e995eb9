import { hasControlCharacter, plainText } from '../../src/http/text.js';

describe('the shared string rules (operator-api 2.10)', () => {
  test('every C0 control character and DEL is refused; printable text and non-ASCII pass', () => {
    for (let code = 0; code < 0x20; code++)
      expect(hasControlCharacter(`a${String.fromCharCode(code)}b`)).toBe(true);
    expect(hasControlCharacter('a\u007fb')).toBe(true);
    expect(hasControlCharacter('plain text, ünïcödé ✓ and emoji 🎉')).toBe(false);
    expect(hasControlCharacter('\u0080 is C1, not C0')).toBe(false);
  });

  test('the whitespace variant allows tab, newline and CR only', () => {
    expect(hasControlCharacter('line one\nline two\r\n\tindented', { whitespace: true })).toBe(false);
    for (const c of ['\u0000', '\u0008', '\u000b', '\u000c', '\u001b', '\u007f'])
      expect(hasControlCharacter(`x${c}`, { whitespace: true })).toBe(true);
  });

  test('plainText bounds the length, trims when asked and names the rule', () => {
    const name = plainText(5, { min: 1, trim: true });
    expect(name.parse('  abc  ')).toBe('abc');
    expect(name.safeParse('   ').success).toBe(false);
    expect(name.safeParse('abcdef').success).toBe(false);
    const failure = plainText(50).safeParse('tab\there');
    expect(failure.success).toBe(false);
    expect(failure.error!.issues[0]!.message).toBe('must not contain control characters');
    expect(plainText(50, { whitespace: true }).parse('tab\there')).toBe('tab\there');
    expect(plainText(50, { message: 'nope' }).safeParse('\u0000').error!.issues[0]!.message).toBe('nope');
  });
});
