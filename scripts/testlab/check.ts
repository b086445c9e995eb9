/**
 * Checks Test Lab cases: each validates (case.yml, expected.yml, before/, after/); each authored answer
 * parses with the engine's own parser, has its relies file, names only files it covers, and relies on lines
 * that are the case's after/ text at those numbers. `tsx scripts/testlab/check.ts [case-name-prefix...]`
 */
import { join } from 'node:path';
import { caseDirs, loadCase, type TestLabCase } from '../../src/testlab/case.js';
import { parseReviewOutput } from '../../src/review/parse-output.js';
import { parseSynthesis } from '../../src/review/synthesis.js';

const root = join(process.cwd(), 'fixtures/testlab');
const prefixes = process.argv.slice(2);
const dirs = caseDirs(root).filter(
  (d) => prefixes.length === 0 || prefixes.some((p) => d.split('/').pop()!.startsWith(p)),
);
let failed = 0;
const cases: TestLabCase[] = [];
for (const dir of dirs) {
  try {
    const c = loadCase(dir);
    cases.push(c);
    const problems: string[] = [];
    if (c.authored.length === 0 && !c.meta.liveOnly) problems.push('no authored answer under answers/');
    problems.push(...c.answerProblems);
    const synthesisText = c.answers.get('synthesis.txt');
    if (synthesisText !== undefined) {
      const synthesis = parseSynthesis(synthesisText);
      if (!synthesis.ok) problems.push(`answers/synthesis.txt: ${synthesis.error}`);
    }
    for (const a of c.authored) {
      const file = `${a.name}.txt`;
      const parsed = parseReviewOutput(a.text, { suppliedContextIds: new Set() });
      if (!parsed.ok) {
        problems.push(`answers/${file}: ${parsed.error}`);
        continue;
      }
      for (const f of parsed.output.findings) {
        if (!a.relies.covers.includes(f.path))
          problems.push(`answers/${file}: finding path ${f.path} is not a file the answer covers`);
      }
      for (const r of a.relies.lines) {
        const after = c.files.find((x) => x.path === r.path)?.after?.split('\n')[r.line - 1];
        if (after !== r.text)
          problems.push(
            `answers/${a.name}.relies.yml: ${r.path}:${r.line} is not that line of after/ (re-derive)`,
          );
      }
    }
    const changed = c.files.filter((f) => f.changed).length;
    const golden = c.golden ?? [];
    const label = c.clean
      ? 'clean'
      : golden.length > 0
        ? `${golden.filter((g) => g.label === 'tp').length} tp / ${golden.filter((g) => g.label === 'fp').length} fp golden findings from ${c.meta.source?.repo}#${c.meta.source?.pr} (${c.meta.source?.licence}; live only)`
        : c.bugs.map((b) => `${b.category}@${b.path}:${b.lines.join('-')}`).join(', ');
    console.log(
      `${problems.length ? 'FAIL' : 'ok  '} ${c.name} [${c.meta.language}, ${changed} changed file(s)] ${label}`,
    );
    for (const p of problems) console.log(`     ${p}`);
    if (problems.length) failed++;
  } catch (error) {
    failed++;
    console.log(`FAIL ${dir}: ${(error as Error).message}`);
  }
}
const bugCases = cases.filter((c) => !c.clean);
console.log(
  `${cases.length} case(s): ${bugCases.length} with planted bugs, ${cases.length - bugCases.length} clean; languages ${[...new Set(cases.map((c) => c.meta.language))].join(', ')}; categories ${[...new Set(bugCases.flatMap((c) => c.bugs.map((b) => b.category)))].join(', ')}; ${failed} failing`,
);
process.exit(failed ? 1 : 0);
