import { checkFindingAnchors } from '../../src/review/anchors.js';
import { buildReviewInput } from '../../src/review/context.js';
import { checkAnchor, newSideIndex, numberPatch, parsePatch } from '../../src/review/diff.js';
import type { Finding } from '../../src/review/output.schema.js';

const MODIFIED = [
  '@@ -10,5 +10,6 @@ export function evict(key) {',
  '   const entry = cache.get(key);',
  '-  cache.delete(key);',
  '+  if (entry && expired(entry)) {',
  '+    cache.delete(key);',
  '+  }',
  '   return entry;',
  ' }',
  '@@ -40,3 +41,2 @@ function other() {',
  '   a();',
  '-  b();',
  '   c();',
].join('\n');

describe('numbered diff format', () => {
  test('context and added lines carry their new-side numbers; removed lines go to __old hunk__', () => {
    expect(numberPatch(MODIFIED)).toBe(
      [
        '@@ -10,5 +10,6 @@ export function evict(key) {',
        '__new hunk__',
        '10    const entry = cache.get(key);',
        '11 +  if (entry && expired(entry)) {',
        '12 +    cache.delete(key);',
        '13 +  }',
        '14    return entry;',
        '15  }',
        '__old hunk__',
        '-  cache.delete(key);',
        '@@ -40,3 +41,2 @@ function other() {',
        '__new hunk__',
        '41    a();',
        '42    c();',
        '__old hunk__',
        '-  b();',
      ].join('\n'),
    );
  });

  test('a new file: a hunk at line 1, additions only, no __old hunk__', () => {
    expect(numberPatch('@@ -0,0 +1,3 @@\n+a\n+b\n+c')).toBe(
      ['@@ -0,0 +1,3 @@', '__new hunk__', '1 +a', '2 +b', '3 +c'].join('\n'),
    );
  });

  test('a deleted file: no line on the new side, every line under __old hunk__', () => {
    const out = numberPatch('@@ -1,2 +0,0 @@\n-gone\n-too');
    expect(out).toContain('(no line on the new side: this hunk only removes lines)');
    expect(out).toContain('__old hunk__\n-gone\n-too');
    expect(newSideIndex('@@ -1,2 +0,0 @@\n-gone\n-too').size).toBe(0);
  });

  test('a hunk that only removes more than three lines is compressed to one line naming them', () => {
    const patch =
      '@@ -10,5 +9,0 @@\n-function legacyLogin(user) {\n-  check(user);\n-  audit(user);\n-  return true;\n-}';
    expect(numberPatch(patch)).toBe(
      [
        '@@ -10,5 +9,0 @@',
        '__new hunk__',
        '(no line on the new side: this hunk only removes lines)',
        '__old hunk__',
        '(5 lines removed, from: "function legacyLogin(user) {")',
      ].join('\n'),
    );
  });

  test('the "no newline at end of file" marker is neither a line nor a number', () => {
    const patch = '@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b;\n\\ No newline at end of file';
    expect(numberPatch(patch)).toBe(
      ['@@ -1,2 +1,2 @@', '__new hunk__', '1  a', '2 +b;', '__old hunk__', '-b'].join('\n'),
    );
    expect([...newSideIndex(patch).keys()]).toEqual([1, 2]);
  });

  test('hunk headers without counts mean one line', () => {
    const [hunk] = parsePatch('@@ -3 +3 @@\n-x\n+y');
    expect(hunk).toMatchObject({ oldStart: 3, oldCount: 1, newStart: 3, newCount: 1 });
    expect(numberPatch('@@ -3 +3 @@\n-x\n+y')).toBe('@@ -3,1 +3,1 @@\n__new hunk__\n3 +y\n__old hunk__\n-x');
  });

  test('numbers are padded to one width within a hunk', () => {
    const lines = Array.from({ length: 12 }, (_, i) => `+line ${i + 1}`);
    const out = numberPatch(`@@ -0,0 +1,12 @@\n${lines.join('\n')}`).split('\n');
    expect(out[2]).toBe(' 1 +line 1');
    expect(out[13]).toBe('12 +line 12');
  });

  test('a file of 10,000 added lines: every line numbered, last one 10000', () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `+const v${i} = ${i};`);
    const patch = `@@ -0,0 +1,10000 @@\n${lines.join('\n')}`;
    const out = numberPatch(patch).split('\n');
    expect(out).toHaveLength(10_002);
    expect(out[10_001]).toBe('10000 +const v9999 = 9999;');
    expect(checkAnchor(newSideIndex(patch), 9_990, 10_000)).toMatchObject({
      ok: true,
      line: 9_990,
      endLine: 10_000,
    });
  });

  test('no patch, an empty patch or text without a hunk gives nothing', () => {
    expect(numberPatch(null)).toBe('');
    expect(numberPatch('')).toBe('');
    expect(numberPatch('Binary files differ')).toBe('');
  });

  test('the review input shows renames with their old path, numbered; binary files are not reviewed', () => {
    const input = buildReviewInput([
      {
        filename: 'src/new-name.ts',
        previous_filename: 'src/old-name.ts',
        status: 'renamed',
        additions: 1,
        deletions: 1,
        changes: 2,
        patch: '@@ -1 +1 @@\n-old\n+new',
      },
      { filename: 'logo.png', status: 'added', additions: 0, deletions: 0, changes: 0, patch: null },
    ]);
    const file = input.chunks[0]!.files[0]!;
    expect(file.previousPath).toBe('src/old-name.ts');
    expect(file.patch).toBe('@@ -1,1 +1,1 @@\n__new hunk__\n1 +new\n__old hunk__\n-old');
    expect(input.notReviewed).toEqual([
      { path: 'logo.png', reason: 'no textual diff from GitHub (binary or too large)' },
    ]);
  });
});

describe('anchor checking', () => {
  const index = newSideIndex(MODIFIED);

  test('a line or range of one hunk on the new side holds, with the text of its lines', () => {
    expect(checkAnchor(index, 11, null)).toEqual({
      ok: true,
      line: 11,
      endLine: 11,
      lineText: '  if (entry && expired(entry)) {',
    });
    expect(checkAnchor(index, 11, 13)).toMatchObject({ ok: true, line: 11, endLine: 13 });
    // A context line can be commented on too.
    expect(checkAnchor(index, 14, undefined)).toMatchObject({ ok: true, lineText: '  return entry;' });
  });

  test.each<[string, unknown, unknown, RegExp]>([
    ['a line before the first hunk', 3, null, /line 3 is not on the new side/],
    ['a line between hunks', 20, null, /line 20 is not on the new side/],
    ['a line past the last hunk', 99, null, /line 99 is not on the new side/],
    ['a range across two hunks', 14, 41, /not on the new side|more than one hunk/],
    ['a range that runs out of its hunk', 14, 16, /line 16 is not on the new side/],
    ['endLine before line', 13, 11, /endLine 11 is before line 13/],
    ['line zero', 0, null, /is not a line number/],
    ['a negative line', -4, null, /is not a line number/],
    ['a fractional line', 11.5, null, /is not a line number/],
    ['a line as a string', '11', null, /is not a line number/],
    ['an endLine as a string', 11, '12', /endLine "12" is not a line number/],
  ])('%s is refused', (_name, line, endLine, reason) => {
    const check = checkAnchor(index, line, endLine);
    expect(check.ok).toBe(false);
    expect((check as { reason: string }).reason).toMatch(reason);
  });

  test('a range over two adjacent hunks is refused even when both lines are on the new side', () => {
    const twoHunks = '@@ -1,1 +1,1 @@\n-a\n+A\n@@ -2,1 +2,1 @@\n-b\n+B';
    expect(checkAnchor(newSideIndex(twoHunks), 1, 2)).toEqual({
      ok: false,
      reason: 'lines 1-2 span more than one hunk',
    });
  });

  test('a file without a textual diff has no line to anchor to', () => {
    expect(checkAnchor(null, 1, null)).toEqual({
      ok: false,
      reason: 'the file has no textual diff in this pull request',
    });
  });
});

describe('checkFindingAnchors', () => {
  const files = [
    { filename: 'src/cache.ts', status: 'modified', additions: 3, deletions: 1, changes: 4, patch: MODIFIED },
    { filename: 'logo.png', status: 'added', additions: 0, deletions: 0, changes: 0, patch: null },
  ];
  const base: Finding = {
    severity: 'high',
    category: 'correctness',
    path: 'src/cache.ts',
    title: 'T',
    body: 'B',
    contextIds: [],
  };

  test('kept anchors keep their suggestion and line text; failed ones are removed, the findings stay', () => {
    const report = checkFindingAnchors(
      [
        {
          ...base,
          title: 'kept',
          line: 11,
          endLine: 13,
          suggestion: '  if (entry) {\n    cache.delete(key);\n  }',
        },
        { ...base, title: 'off the diff', line: 3, suggestion: 'x' },
        { ...base, title: 'other file', path: 'src/missing.ts', line: 1 },
        { ...base, title: 'binary', path: 'logo.png', line: 1 },
        { ...base, title: 'no anchor, a suggestion', suggestion: 'y' },
        { ...base, title: 'no anchor' },
        { ...base, title: 'leading ./ path', path: './src/cache.ts', line: 41 },
      ],
      files,
    );
    expect(report.findings.map((f) => [f.title, f.line, f.endLine, f.suggestion !== null])).toEqual([
      ['kept', 11, 13, true],
      ['off the diff', null, null, false],
      ['other file', null, null, false],
      ['binary', null, null, false],
      ['no anchor, a suggestion', null, null, false],
      ['no anchor', null, null, false],
      ['leading ./ path', 41, 41, false],
    ]);
    expect(report.findings[0]!.lineText).toBe(
      '  if (entry && expired(entry)) {\n    cache.delete(key);\n  }',
    );
    expect(report.kept).toBe(2);
    expect(report.removed.map((r) => [r.title, r.reason])).toEqual([
      ['off the diff', 'line 3 is not on the new side of the diff'],
      ['other file', 'src/missing.ts is not a changed file of this pull request'],
      ['binary', 'the file has no textual diff in this pull request'],
    ]);
    expect(report.suggestionsDropped).toBe(2);
  });
});
