import {
  buildReviewInput,
  classifyFile,
  clipPatch,
  prioritiseFiles,
  tokensOf,
  type ChangedFile,
} from '../../src/review/context.js';

function file(filename: string, patch: string | null, over: Partial<ChangedFile> = {}): ChangedFile {
  const lines = patch ? patch.split('\n').length : 0;
  return { filename, status: 'modified', additions: lines, deletions: 0, changes: lines, patch, ...over };
}

function patchOf(lines: number, seed = 'x'): string {
  const body = Array.from(
    { length: lines },
    (_, i) => `+const ${seed}${i} = computeSomething(${i}, "${seed}");`,
  ).join('\n');
  return `@@ -0,0 +1,${lines} @@\n${body}`;
}

describe('review context within a token budget', () => {
  it('counts tokens with a real tokenizer, not characters', () => {
    expect(tokensOf('')).toBe(0);
    // 40 identical characters are far fewer than 40 tokens; a word is one token.
    expect(tokensOf('a'.repeat(40))).toBeLessThan(40);
    expect(tokensOf('hello')).toBe(1);
  });

  it('classifies lock, vendored, generated and source files', () => {
    expect(classifyFile('package-lock.json')).toBe('lock');
    expect(classifyFile('sub/yarn.lock')).toBe('lock');
    expect(classifyFile('vendor/lib/a.go')).toBe('vendored');
    expect(classifyFile('node_modules/x/index.js')).toBe('vendored');
    expect(classifyFile('dist/app.min.js')).toBe('generated');
    expect(classifyFile('src/app.ts')).toBe('source');
  });

  it('puts source before generated, vendored and lock files, and additions before deletions', () => {
    const ordered = prioritiseFiles([
      file('package-lock.json', '+a'),
      file('dist/app.min.js', '+a'),
      file('src/removed.ts', '-a', { status: 'removed', additions: 0, deletions: 1 }),
      file('src/added.ts', '+a'),
      file('vendor/x.go', '+a'),
    ]).map((f) => f.filename);
    expect(ordered.indexOf('src/added.ts')).toBeLessThan(ordered.indexOf('src/removed.ts'));
    expect(ordered.indexOf('src/removed.ts')).toBeLessThan(ordered.indexOf('dist/app.min.js'));
    expect(ordered.indexOf('dist/app.min.js')).toBeLessThan(ordered.indexOf('package-lock.json'));
    expect(ordered.indexOf('src/added.ts')).toBeLessThan(ordered.indexOf('vendor/x.go'));
  });

  it('clips a large patch with a marker naming the left-out lines, within the token cap', () => {
    const big = patchOf(2000);
    const clip = clipPatch(big, 500);
    expect(clip.clipped).toBe(true);
    expect(clip.tokens).toBeLessThanOrEqual(500);
    expect(clip.tokens).toBe(tokensOf(clip.text));
    expect(clip.text).toMatch(new RegExp(`clipped by Verdict: ${clip.omittedLines} more line`));
    expect(clip.omittedLines).toBeGreaterThan(1000);
    const small = clipPatch('+one line', 500);
    expect(small).toEqual({
      text: '+one line',
      tokens: tokensOf('+one line'),
      clipped: false,
      omittedLines: 0,
    });
  });

  it('splits files into chunks within the budget and accounts for every file', () => {
    const files = Array.from({ length: 60 }, (_, i) => file(`src/f${i}.ts`, patchOf(40, `v${i}`)));
    files.push(file('assets/logo.png', null));
    const input = buildReviewInput(files, { chunkTokens: 3000, fileTokens: 1000, maxChunks: 4 });
    expect(input.chunks.length).toBe(4);
    for (const chunk of input.chunks) expect(chunk.tokens).toBeLessThanOrEqual(3000);
    const inChunks = input.chunks.flatMap((c) => c.files.map((f) => f.path));
    const skipped = input.notReviewed.map((n) => n.path);
    expect(new Set([...inChunks, ...skipped]).size).toBe(files.length);
    expect(inChunks.length + skipped.length).toBe(files.length);
    expect(input.notReviewed.find((n) => n.path === 'assets/logo.png')?.reason).toMatch(/no textual diff/);
    expect(input.notReviewed.some((n) => /over the review budget of 4 model calls/.test(n.reason))).toBe(
      true,
    );
    expect(input.missingValidations[0]).toMatch(/changed file\(s\) not reviewed/);
  });

  it('lists clipped files in missingValidations', () => {
    const input = buildReviewInput([file('src/huge.ts', patchOf(3000))], {
      chunkTokens: 5000,
      fileTokens: 2000,
      maxChunks: 2,
    });
    expect(input.chunks).toHaveLength(1);
    expect(input.clipped).toEqual([{ path: 'src/huge.ts', omittedLines: expect.any(Number) }]);
    expect(input.missingValidations.join('\n')).toMatch(/reviewed only in part/);
    expect(input.chunks[0]!.tokens).toBeLessThanOrEqual(2000);
  });
});
