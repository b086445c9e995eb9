import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * No import cycle in src/ (issue 39): every module's relative imports, type-only and dynamic ones
 * included, form a graph without a cycle. A cycle is reported as the modules it runs through.
 */
const SRC = resolve('src');

function modules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modules(path);
    return /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The module a relative specifier names (`./x.js` is `./x.ts`; a folder is its index). */
function target(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base.replace(/\.m?js$/, (ext) => (ext === '.mjs' ? '.mts' : '.ts')),
    base,
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  return candidates.find((p) => existsSync(p) && statSync(p).isFile() && /\.m?ts$/.test(p)) ?? null;
}

export function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const deps = importedFiles
      .map((i) => i.fileName)
      .filter((s) => s.startsWith('.'))
      .map((s) => target(file, s))
      .filter((p): p is string => p !== null);
    graph.set(file, [...new Set(deps)]);
  }
  return graph;
}

/** The strongly connected groups of more than one module (Tarjan), each a cycle or several. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('src/ has no import cycle', () => {
  const found = cycles(importGraph(modules(SRC))).map((group) => group.map((p) => relative(SRC, p)));
  expect(found).toEqual([]);
});

test('the check finds a cycle, through type-only and dynamic imports too', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
  ]);
  expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  const files = [join(SRC, 'handlers', 'app.ts'), join(SRC, 'handlers', 'deps.ts')];
  const real = importGraph(files);
  expect(real.get(files[0]!)).toContain(files[1]); // `import type { AppDeps } from './deps.js'`
  const dynamic = importGraph([join(SRC, 'cli', 'main.ts')]).get(join(SRC, 'cli', 'main.ts'));
  expect(dynamic).toContain(join(SRC, 'cli', 'doctor.ts')); // `import('./doctor.js')`
});
