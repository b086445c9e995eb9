/**
 * Imports ReviewBench pull requests as Test Lab cases (docs/testlab.md, "Real pull requests").
 *
 * One pull request:
 *   npx tsx scripts/testlab/import-reviewbench.ts --findings <findings.json|golden/<key>.json> [--key <pr_key>]
 *     --git-dir <repository git dir> --repo <owner/name> --title <title> [--language <l>] [--split test|full]
 *     [--name <case>] [--base <sha>] [--base-branch <branch>] [--corpus fixtures/testlab] [--replace]
 *
 * Every pull request of a manifest (fixtures/reviewbench/picks.yml), each repository's git directory found
 * under --mirrors as `<owner>+<name>/repo` (the layout of a fetched mirror) or `<owner>/<name>.git`:
 *   npx tsx scripts/testlab/import-reviewbench.ts --manifest fixtures/reviewbench/picks.yml --mirrors <dir> [--replace]
 *
 * The findings file is ReviewBench's own format: `corpus/test/findings.json` (or an excerpt of it holding
 * the pull request's key) or `golden/<pr_key>.json`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { CASE_LANGUAGES } from '../../src/testlab/case.js';
import { GitDir, importReviewBench, readReviewBench } from '../../src/testlab/reviewbench.js';

const { values } = parseArgs({
  options: {
    findings: { type: 'string' },
    key: { type: 'string' },
    'git-dir': { type: 'string' },
    repo: { type: 'string' },
    title: { type: 'string' },
    language: { type: 'string' },
    split: { type: 'string', default: 'test' },
    name: { type: 'string' },
    base: { type: 'string' },
    'base-branch': { type: 'string' },
    corpus: { type: 'string', default: 'fixtures/testlab' },
    manifest: { type: 'string' },
    mirrors: { type: 'string' },
    replace: { type: 'boolean', default: false },
  },
});

const entrySchema = z.strictObject({
  findings: z.string().min(1),
  key: z.string().optional(),
  repo: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/),
  title: z.string().min(1),
  language: z.enum(CASE_LANGUAGES).optional(),
  split: z.enum(['test', 'full']).default('test'),
  name: z.string().optional(),
  base: z.string().optional(),
  baseBranch: z.string().optional(),
});
type Entry = z.infer<typeof entrySchema>;

function gitDirFor(mirrors: string, repo: string): string {
  const [owner, name] = repo.split('/') as [string, string];
  const candidates = [join(mirrors, `${owner}+${name}`, 'repo'), join(mirrors, owner, `${name}.git`)];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`no git directory for ${repo} under ${mirrors} (${candidates.join(', ')})`);
  return found;
}

function importOne(entry: Entry, gitDir: string, findingsFile: string): boolean {
  try {
    const rb = readReviewBench(JSON.parse(readFileSync(findingsFile, 'utf8')), entry.key);
    const { case: c, dropped } = importReviewBench({
      rb,
      git: new GitDir(gitDir),
      repo: entry.repo,
      corpus: resolve(values.corpus!),
      split: entry.split,
      title: entry.title,
      ...(entry.name ? { name: entry.name } : {}),
      ...(entry.language ? { language: entry.language } : {}),
      ...(entry.base ? { base: entry.base } : {}),
      ...(entry.baseBranch ? { baseBranch: entry.baseBranch } : {}),
      replace: values.replace,
    });
    const changed = c.files.filter((f) => f.changed).length;
    const golden = c.golden ?? [];
    console.log(
      `ok   ${c.name} [${c.meta.language}, ${c.meta.source!.licence}] ${entry.repo}#${c.meta.source!.pr} ${c.meta.source!.base.slice(0, 8)}..${c.meta.source!.head.slice(0, 8)}: ${changed} changed file(s), ${c.files.length - changed} context, ${golden.filter((g) => g.label === 'tp').length} tp / ${golden.filter((g) => g.label === 'fp').length} fp golden finding(s)`,
    );
    for (const d of dropped) console.log(`     dropped golden finding ${d}`);
    return true;
  } catch (error) {
    console.log(`FAIL ${entry.repo} (${entry.key ?? findingsFile}): ${(error as Error).message}`);
    return false;
  }
}

let ok = true;
if (values.manifest) {
  if (!values.mirrors) throw new Error('--manifest needs --mirrors <dir>');
  const entries = z.array(entrySchema).parse(parseYaml(readFileSync(values.manifest, 'utf8')));
  const base = dirname(resolve(values.manifest));
  for (const entry of entries) {
    ok = importOne(entry, gitDirFor(values.mirrors, entry.repo), join(base, entry.findings)) && ok;
  }
} else {
  const entry = entrySchema.parse({
    findings: values.findings,
    key: values.key,
    repo: values.repo,
    title: values.title,
    language: values.language,
    split: values.split,
    name: values.name,
    base: values.base,
    baseBranch: values['base-branch'],
  });
  if (!values['git-dir']) throw new Error('--git-dir is required (or --manifest with --mirrors)');
  ok = importOne(entry, values['git-dir'], entry.findings);
}
process.exit(ok ? 0 : 1);
