/**
 * Checks Test Lab cases: each validates (case.yml, expected.yml, before/, after/), and each recorded answer
 * parses with the engine's own parser. `tsx scripts/testlab/check.ts [case-name-prefix...]`
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
    if (c.answers.size === 0 && !c.meta.liveOnly) problems.push('no recorded answer under answers/');
    for (const [file, text] of c.answers) {
      if (file === 'synthesis.txt') {
        const synthesis = parseSynthesis(text);
        if (!synthesis.ok) problems.push(`answers/${file}: ${synthesis.error}`);
        continue;
      }
      const parsed = parseReviewOutput(text, { suppliedContextIds: new Set() });
      if (!parsed.ok) {
        problems.push(`answers/${file}: ${parsed.error}`);
        continue;
      }
      for (const f of parsed.output.findings) {
        if (!c.files.some((x) => x.path === f.path))
          problems.push(`answers/${file}: finding path ${f.path} is not a file of the case`);
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
