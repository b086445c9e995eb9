import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { GitHubClient } from '../github/client.js';
import { fileReader } from '../review/gather.js';
import { BUG_CATEGORIES, CASE_LANGUAGES, loadCase, type PlantedBug, type TestLabCase } from './case.js';

/** A `--bug path:line[-line]:category` of `verdict testlab add`. */
export type BugSpec = { path: string; lines: [number, number]; category: PlantedBug['category'] };

/** Parses `path:line[-line]:category` (the path may itself hold colons: it is read from the right). */
export function parseBugSpec(spec: string): BugSpec {
  const m = /^(.+):(\d+)(?:-(\d+))?:([a-z-]+)$/.exec(spec);
  if (!m) throw new Error(`--bug "${spec}" is not path:line[-line]:category`);
  const first = Number(m[2]);
  const last = m[3] === undefined ? first : Number(m[3]);
  if (first < 1 || last < first)
    throw new Error(`--bug "${spec}": lines must be first[-last] with first <= last`);
  if (!(BUG_CATEGORIES as readonly string[]).includes(m[4]!)) {
    throw new Error(`--bug "${spec}": the category must be one of ${BUG_CATEGORIES.join(', ')}`);
  }
  return { path: m[1]!, lines: [first, last], category: m[4] as BugSpec['category'] };
}

/** Words a finding about a bug of each class usually carries (the default keywords of a captured bug). */
const CATEGORY_KEYWORDS: Record<PlantedBug['category'], string[]> = {
  injection: ['injection', 'sanitiz', 'escap', 'parameter'],
  'broken-authorization': ['authoriz', 'permission', 'owner', 'access'],
  'off-by-one': ['off-by-one', 'boundary', 'index', 'last'],
  'null-dereference': ['null', 'undefined', 'nil', 'check'],
  'race-condition': ['race', 'concurren', 'lock', 'atomic'],
  'resource-leak': ['leak', 'close', 'release', 'finally'],
  'missing-await': ['await', 'promise', 'async'],
  'swallowed-error': ['error', 'swallow', 'ignor', 'catch'],
  'wrong-unit': ['unit', 'seconds', 'milliseconds', 'conver'],
  overflow: ['overflow', 'int32', 'truncat', 'large'],
  'n-plus-one': ['n+1', 'query', 'loop', 'batch'],
  'secret-in-code': ['secret', 'key', 'credential', 'hardcod'],
  'unsafe-deserialization': ['deserializ', 'untrusted', 'pickle', 'unsafe'],
  logic: ['wrong', 'incorrect', 'condition'],
};

const EXTENSIONS: Record<string, (typeof CASE_LANGUAGES)[number]> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  py: 'python',
  go: 'go',
  java: 'java',
  rb: 'ruby',
  rs: 'rust',
  kt: 'kotlin',
  cs: 'csharp',
  php: 'php',
};

/** The language most of the changed files are written in, or null. */
export function guessLanguage(paths: readonly string[]): (typeof CASE_LANGUAGES)[number] | null {
  const counts = new Map<string, number>();
  for (const p of paths) {
    const lang = EXTENSIONS[p.slice(p.lastIndexOf('.') + 1).toLowerCase()];
    if (lang) counts.set(lang, (counts.get(lang) ?? 0) + 1);
  }
  const best = [...counts].sort((a, b) => b[1] - a[1])[0];
  return (best?.[0] as (typeof CASE_LANGUAGES)[number] | undefined) ?? null;
}

/** A file's text at a commit (gather's reader: null when it is not there), and null for a binary file. */
async function textAt(gh: GitHubClient, owner: string, repo: string, path: string, ref: string) {
  const text = await fileReader(gh, owner, repo, ref)(path);
  return text === null || text.includes('\u0000') ? null : text;
}

export type CaptureOptions = {
  gh: GitHubClient;
  owner: string;
  repo: string;
  number: number;
  bugs: BugSpec[];
  /** The corpus folder the case is written into. */
  corpus: string;
  name?: string;
  severity?: PlantedBug['severity'];
  keywords?: string[];
  language?: (typeof CASE_LANGUAGES)[number];
};

/**
 * Captures a pull request into a new Test Lab case: its title, body and branches, the text of every
 * changed file at the base and at the head, and the planted bugs as given (or `clean: true` without
 * any). The case is validated as the corpus loader reads it; a case folder that exists is never
 * overwritten. It has no answers yet: author them, or `verdict testlab run --record` records a model's,
 * then scripts/testlab/derive-relies.ts binds them to the prompt (docs/testlab.md, "Authored answers").
 */
export async function capturePullRequest(opts: CaptureOptions): Promise<TestLabCase> {
  const { gh, owner, repo, number } = opts;
  const name =
    opts.name ??
    `${repo}-${number}`
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80);
  const dir = join(opts.corpus, name);
  if (existsSync(dir)) throw new Error(`the case ${dir} exists already (choose another --name)`);
  const { data: pr } = await gh.rest.pulls.get({ owner, repo, pull_number: number });
  const files = await gh.paginate(gh.rest.pulls.listFiles, {
    owner,
    repo,
    pull_number: number,
    per_page: 100,
  });
  const language = opts.language ?? guessLanguage(files.map((f) => f.filename));
  if (!language)
    throw new Error(
      `the language of ${owner}/${repo}#${number} cannot be told from its files: pass --language`,
    );
  const written: Array<{ side: 'before' | 'after'; path: string; text: string }> = [];
  for (const f of files) {
    const beforePath = f.previous_filename ?? f.filename;
    const before = f.status === 'added' ? null : await textAt(gh, owner, repo, beforePath, pr.base.sha);
    const after = f.status === 'removed' ? null : await textAt(gh, owner, repo, f.filename, pr.head.sha);
    if (before !== null) written.push({ side: 'before', path: beforePath, text: before });
    if (after !== null) written.push({ side: 'after', path: f.filename, text: after });
  }
  const keywordsFor = (b: BugSpec) => opts.keywords ?? CATEGORY_KEYWORDS[b.category];
  const expected =
    opts.bugs.length === 0
      ? { clean: true, note: `captured from ${owner}/${repo}#${number}` }
      : {
          bugs: opts.bugs.map((b, i) => ({
            id: `${b.category}-${i + 1}`,
            path: b.path,
            lines: b.lines,
            category: b.category,
            severity: opts.severity ?? 'high',
            keywords: keywordsFor(b),
            description: `A ${b.category} bug at ${b.path}:${b.lines.join('-')} (captured from ${owner}/${repo}#${number}).`,
          })),
        };
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(
      join(dir, 'case.yml'),
      stringify({
        title: pr.title,
        body: pr.body ?? '',
        language,
        base: pr.base.ref,
        head: pr.head.ref,
        kind: opts.bugs.length === 0 ? 'clean' : 'fix',
      }),
    );
    writeFileSync(join(dir, 'expected.yml'), stringify(expected));
    for (const w of written) {
      const file = join(dir, w.side, w.path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, w.text);
    }
    return loadCase(dir);
  } catch (error) {
    // A case that does not load is not left half-written in the corpus.
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
