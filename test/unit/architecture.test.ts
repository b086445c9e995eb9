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

/**
 * The module specifiers a file imports for their values: `import type` and `export type` statements are
 * left out (they compile away); `import { type A, b }` is a value import.
 */
function valueSpecifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const statements = [
    ...text.matchAll(/^\s*(?:import|export)\s+(type\s+)?[^'";]*?from\s*['"]([^'"]+)['"]/gm),
  ];
  const dynamic = [...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
  return [...statements.filter((m) => !m[1]).map((m) => m[2]!), ...dynamic];
}

/** `file: specifier` for each import of a module under `dir` that matches `pattern`. */
function importsMatching(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    specifiers(file)
      .filter((s) => pattern.test(s))
      .map((s) => `${file}: ${s}`),
  );
}

/** The same, for value imports only. */
function valueImportsMatching(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    valueSpecifiers(file)
      .filter((s) => pattern.test(s))
      .map((s) => `${file}: ${s}`),
  );
}

/** The faces over the services: REST, tRPC, the CLI and the command bridge (DESIGN.md, issue 23 item 4). */
const FACES = ['src/operator', 'src/trpc', 'src/cli', 'src/bridge'].flatMap((dir) => modules(dir));

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

  test('the faces reach the store through services/: no value import of a store module but store/index.js', () => {
    // store/index.js opens the store (the CLI and the bridge open their own); its table modules are the
    // SQL. Type imports of their records are allowed: they compile away.
    expect(FACES.length).toBeGreaterThan(5);
    expect(valueImportsMatching(FACES, /(^|\/)store\/(?!index\.js$)/)).toEqual([]);
  });

  test('the faces do not import what a service wraps (requeue, report building)', () => {
    expect(importsMatching(FACES, /(^|\/)(review\/requeue|reports\/(report|export))\.js$/)).toEqual([]);
  });

  test('the review engine is a pipeline of stage modules: no module of src/review/ is over 400 lines (issue 35)', () => {
    const lines = (file: string) => readFileSync(file, 'utf8').split('\n').length - 1;
    const long = modules('src/review')
      .filter((file) => lines(file) > 400)
      .map((file) => `${file}: ${lines(file)} lines`);
    expect(long).toEqual([]);
    const stages = modules('src/review').filter((file) => file.endsWith('.stage.ts'));
    expect(stages.length).toBeGreaterThanOrEqual(10);
  });

  test('services/ imports no face (operator/, trpc/, cli/, bridge/, compose/)', () => {
    expect(importsMatching(modules('src/services'), /(^|\/)(operator|trpc|cli|bridge|compose)\//)).toEqual(
      [],
    );
  });
});
