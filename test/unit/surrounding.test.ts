import { parsedBlock, surroundingCode, textBlock } from '../../src/review/surrounding.js';

const TS = [
  'import { store } from "./store";', // 1
  '', // 2
  'export class Cache {', // 3
  '  get(key: string) {', // 4
  '    const hit = store.get(key);', // 5
  '    if (!hit) return undefined;', // 6
  '    return hit.value;', // 7
  '  }', // 8
  '', // 9
  '  evict(key: string) {', // 10
  '    store.delete(key);', // 11
  '  }', // 12
  '}', // 13
].join('\n');

describe('surrounding code', () => {
  test('tree-sitter finds the enclosing method of a TypeScript hunk', async () => {
    expect(await parsedBlock('src/cache.ts', TS, 6, 6)).toEqual({
      start: 4,
      end: 8,
      kind: 'method_definition',
    });
    // A hunk over two methods is enclosed by their class.
    expect(await parsedBlock('src/cache.ts', TS, 7, 11)).toEqual({
      start: 3,
      end: 13,
      kind: 'class_declaration',
    });
  });

  test('Python, Go and Java by their grammars', async () => {
    const py = 'class A:\n    def f(self):\n        x = 1\n        return x\n\ndef g():\n    pass\n';
    expect(await parsedBlock('a.py', py, 3, 3)).toEqual({ start: 2, end: 4, kind: 'function_definition' });
    const go = 'package main\n\nfunc add(a, b int) int {\n\tc := a + b\n\treturn c\n}\n';
    expect(await parsedBlock('main.go', go, 4, 4)).toEqual({
      start: 3,
      end: 6,
      kind: 'function_declaration',
    });
    const java = 'class A {\n  int f(int x) {\n    int y = x + 1;\n    return y;\n  }\n}\n';
    expect(await parsedBlock('A.java', java, 3, 3)).toEqual({ start: 2, end: 5, kind: 'method_declaration' });
  });

  test('the plain-text fallback reads indentation, and blank lines at the top level', () => {
    const lines = ['section:', '  a: 1', '  b: 2', '  c: 3', 'other:', '  d: 4'];
    expect(textBlock(lines, 3, 3)).toEqual({ start: 1, end: 5, kind: 'indented block' });
    const top = ['x = 1', 'y = 2', '', 'z = 3', 'w = 4', '', 'v = 5'];
    expect(textBlock(top, 4, 4)).toEqual({ start: 4, end: 5, kind: 'paragraph' });
  });

  test('each hunk with its enclosing block, numbered, once; deletion-only hunks add nothing', async () => {
    const patch =
      '@@ -6,1 +6,1 @@\n-    if (hit === null) return undefined;\n+    if (!hit) return undefined;\n@@ -11,1 +11,0 @@\n-    log(key);';
    const out = await surroundingCode('src/cache.ts', patch, TS);
    expect(out).toBe(
      [
        '(method_definition, lines 4-8)',
        '4    get(key: string) {',
        '5      const hit = store.get(key);',
        '   … line 6: in the diff',
        '7      return hit.value;',
        '8    }',
      ].join('\n'),
    );
  });

  test('only the lines the diff does not show: runs the diff shows are one marker, blocks do not repeat lines', async () => {
    // A hunk of lines 5-7 (with context) inside get(): the block adds lines 4 and 8 only.
    const patch =
      '@@ -5,3 +5,3 @@\n     const hit = store.get(key);\n-    if (hit === null) return undefined;\n+    if (!hit) return undefined;\n     return hit.value;';
    expect(await surroundingCode('src/cache.ts', patch, TS)).toBe(
      [
        '(method_definition, lines 4-8)',
        '4    get(key: string) {',
        '   … lines 5-7: in the diff',
        '8    }',
      ].join('\n'),
    );
    // A hunk that shows the whole method (lines 4-8 with context) adds nothing.
    const whole =
      '@@ -4,5 +4,5 @@\n   get(key: string) {\n     const hit = store.get(key);\n-    if (hit === null) return undefined;\n+    if (!hit) return undefined;\n     return hit.value;\n   }';
    expect(await surroundingCode('src/cache.ts', whole, TS)).toBe('');
    // Two hunks whose blocks overlap (the class, then a method in it): the method's lines are not repeated.
    const two =
      '@@ -7,5 +7,5 @@\n     return hit.value;\n   }\n \n-  drop(key: string) {\n+  evict(key: string) {\n     store.delete(key);';
    const out = await surroundingCode('src/cache.ts', two, TS);
    expect(out.match(/store\.get\(key\)/g)).toHaveLength(1);
    expect(out).not.toContain('11      store.delete(key);');
  });

  test('an exported top-level function is its own block: a hunk over all of it adds nothing', async () => {
    const src = 'export function a() {\n  return 1;\n}\nexport function b() {\n  return 2;\n}\n';
    expect(await parsedBlock('x.ts', src, 1, 3)).toEqual({ start: 1, end: 3, kind: 'function_declaration' });
    expect(await parsedBlock('x.ts', src, 5, 5)).toEqual({ start: 4, end: 6, kind: 'function_declaration' });
    expect(
      await surroundingCode(
        'x.ts',
        '@@ -1,3 +1,3 @@\n export function a() {\n-  return 0;\n+  return 1;\n }',
        src,
      ),
    ).toBe('');
  });

  test('a new file is shown whole by its diff: no surrounding code', async () => {
    const patch = `@@ -0,0 +1,13 @@\n${TS.split('\n')
      .map((l) => `+${l}`)
      .join('\n')}`;
    expect(await surroundingCode('src/cache.ts', patch, TS)).toBe('');
  });

  test('a long block shows its head and tail', async () => {
    const body = Array.from({ length: 120 }, (_, i) => `  const v${i} = ${i};`);
    const source = ['function big() {', ...body, '}'].join('\n');
    const out = await surroundingCode('big.js', '@@ -60,1 +60,1 @@\n-  x\n+  const v58 = 58;', source);
    expect(out).toContain('(function_declaration, lines 1-122)');
    expect(out).toContain('[81 lines not shown]');
    expect(out.split('\n')).toHaveLength(1 + 30 + 1 + 10);
  });
});
