import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCase, loadCorpus } from '../../src/testlab/case.js';
import { githubPatch } from '../../src/testlab/patch.js';

const CORPUS = join(process.cwd(), 'fixtures/testlab');

describe('Test Lab cases', () => {
  test('the corpus: 40+ cases, 30+ with planted bugs, 10+ clean, 5+ languages, two over 60 files', () => {
    const cases = loadCorpus(CORPUS);
    const bugCases = cases.filter((c) => !c.clean);
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(bugCases.length).toBeGreaterThanOrEqual(30);
    expect(cases.filter((c) => c.clean).length).toBeGreaterThanOrEqual(10);
    const languages = new Set(cases.map((c) => c.meta.language));
    for (const l of ['typescript', 'python', 'go', 'java']) expect(languages).toContain(l);
    expect(languages.size).toBeGreaterThanOrEqual(5);
    const categories = new Set(bugCases.flatMap((c) => c.bugs.map((b) => b.category)));
    expect(categories.size).toBeGreaterThanOrEqual(12);
    const large = cases.filter((c) => c.files.filter((f) => f.changed).length > 60);
    expect(large.length).toBeGreaterThanOrEqual(2);
    // Imported real pull requests (rbench-*) have no authored answers: they are live only.
    for (const c of cases.filter((x) => !x.meta.liveOnly)) {
      // Authored answers with the lines they rely on (the per-part form is converted by derive-relies.ts).
      expect({ name: c.name, problems: c.answerProblems }).toEqual({ name: c.name, problems: [] });
      expect(c.authored.length).toBeGreaterThan(0);
      expect([...c.answers.keys()].filter((f) => /^part-\d+\.txt$/.test(f))).toEqual([]);
    }
  });

  describe('a malformed case is an error naming the file and the key', () => {
    let dir: string;
    const source = join(CORPUS, 'go-shortener-click-stats');
    beforeEach(() => {
      dir = join(mkdtempSync(join(tmpdir(), 'tl-case-')), 'go-case');
      cpSync(source, dir, { recursive: true });
    });
    afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

    test.each([
      [
        'expected.yml',
        'bugs:\n  - id: a\n    path: nope.go\n    lines: [1, 2]\n    category: logic\n    severity: high\n    keywords: [a, b]\n    description: d\n',
        /expected\.yml: bugs\.0\.path: nope\.go is not a file of after\//,
      ],
      [
        'expected.yml',
        'bugs:\n  - id: a\n    path: x\n    lines: [5, 2]\n    category: logic\n    severity: high\n    keywords: [a, b]\n    description: d\n',
        /expected\.yml: bugs\.0\.lines: lines must be \[first, last\]/,
      ],
      [
        'expected.yml',
        'bugs:\n  - id: a\n    path: x\n    lines: [1, 2]\n    category: typo\n    severity: high\n    keywords: [a, b]\n    description: d\n',
        /expected\.yml: bugs\.0\.category: /,
      ],
      ['expected.yml', 'clean: true\nbugs: []\n', /expected\.yml: .*bugs/],
      ['case.yml', 'title: t\nlanguage: cobol\nkind: fix\n', /case\.yml: language: /],
      ['case.yml', 'title: [unclosed\n', /case\.yml: not valid YAML/],
    ])('%s %#', (file, text, message) => {
      writeFileSync(join(dir, file), text);
      expect(() => loadCase(dir)).toThrow(message);
    });
  });

  test('a patch is GitHub-shaped: hunks with 3 lines of context, added files from -0,0', () => {
    const before = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const after = before.replace('line 5\n', 'line five\n');
    expect(githubPatch(before, after)).toBe(
      [
        '@@ -2,7 +2,7 @@',
        ' line 2',
        ' line 3',
        ' line 4',
        '-line 5',
        '+line five',
        ' line 6',
        ' line 7',
        ' line 8',
      ].join('\n'),
    );
    expect(githubPatch(null, 'a\n')).toBe('@@ -0,0 +1,1 @@\n+a');
  });
});
