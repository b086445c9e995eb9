import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every TypeScript and JavaScript module under `dir`. */
function modules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : modules(path);
    return /\.(ts|mts|mjs|js)$/.test(name) ? [path] : [];
  });
}

/** The module specifiers a file imports or requires. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [
    ...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/require\(\s*['"]([^'"]+)['"]\s*\)/g),
  ];
  return found.map((m) => m[1]!);
}

/** `file: specifier` for each import of a module under `dir` that matches `pattern`. */
function importsMatching(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    specifiers(file)
      .filter((s) => pattern.test(s))
      .map((s) => `${file}: ${s}`),
  );
}

const ALL = [...modules('src'), ...modules('scripts'), ...modules('test'), ...modules('bin')];

describe('the shape of the code (issue 23)', () => {
  test('no module imports a private path of a package (lib/, dist/, build/, src/ inside a package)', () => {
    expect(importsMatching(ALL, /^(@[^/.][^/]*\/)?[^/.][^/]*\/(lib|dist|build|src)(\/|$)/)).toEqual([]);
  });

  test('the review engine does not import the publish folder (publication is a port it is given)', () => {
    expect(importsMatching(modules('src/review'), /(^|\/)publish\//)).toEqual([]);
  });

  test('the HTTP ingress does not import the Probot handlers', () => {
    expect(importsMatching(modules('src/ingress'), /(^|\/)handlers\//)).toEqual([]);
  });
});
