import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { z } from 'zod';
import { COPILOT_INSTRUCTIONS, DIRECTORY_INSTRUCTION_FILES } from '../review/instructions.js';
import { guessLanguage } from './capture.js';
import { CASE_LANGUAGES, loadCase, type CaseFile, type GoldenFinding, type TestLabCase } from './case.js';

/**
 * Importing a ReviewBench pull request (github.com/review-bench/ReviewBench, MIT) as a Test Lab case
 * (docs/testlab.md, "Real pull requests"). ReviewBench publishes golden findings per pull request in two
 * shapes: `corpus/test/findings.json` (an object from `pr_key` to the test set's findings, all of them tp:
 * the file lists no label) and `golden/<pr_key>.json` (`{pr_key, pr: {repo, pr_number, base, head},
 * findings}` with a `tp_fp` label on each). The code comes from a git directory holding the repository's
 * commits (an upstream clone or mirror): the case is the diff from the merge base GitHub would use to the
 * reviewed head, as before/ and after/ trees of the files the review reads.
 */

const rbFindingSchema = z.object({
  file: z.string().min(1),
  start_line: z.number().int().min(1),
  end_line: z.number().int().min(1),
  message: z.string().min(1),
  severity: z.enum(['high', 'medium', 'low']),
  category: z.string().min(1),
  tp_fp: z.enum(['tp', 'fp']).optional(),
  scope: z.string().optional(),
  difficulty: z.string().optional(),
  context_required: z.string().optional(),
});
export type ReviewBenchFinding = z.infer<typeof rbFindingSchema>;

const goldenFileSchema = z.object({
  pr_key: z.string().min(1),
  pr: z.object({
    repo: z.string().min(1),
    pr_number: z.number().int().min(1),
    base: z.string().regex(/^[0-9a-f]{40}$/),
    head: z.string().regex(/^[0-9a-f]{40}$/),
  }),
  findings: z.array(rbFindingSchema).min(1),
});

export type ReviewBenchPr = {
  key: string;
  /** From a golden file: the repository URL, number and commits ReviewBench reviewed. */
  pr: { repo: string; number: number; base: string; head: string } | null;
  findings: Array<ReviewBenchFinding & { tp_fp: 'tp' | 'fp' }>;
};

/** Reads one pull request out of either ReviewBench shape (a findings.json needs the key). */
export function readReviewBench(json: unknown, key?: string): ReviewBenchPr {
  const golden = goldenFileSchema.safeParse(json);
  if (golden.success) {
    const g = golden.data;
    if (key && key !== g.pr_key) throw new Error(`the golden file is ${g.pr_key}, not ${key}`);
    return {
      key: g.pr_key,
      pr: { repo: g.pr.repo, number: g.pr.pr_number, base: g.pr.base, head: g.pr.head },
      findings: g.findings.map((f) => ({ ...f, tp_fp: f.tp_fp ?? 'tp' })),
    };
  }
  const map = z.record(z.string(), z.array(rbFindingSchema)).parse(json);
  const keys = Object.keys(map);
  const chosen = key ?? (keys.length === 1 ? keys[0] : undefined);
  if (!chosen) throw new Error(`name the pull request (--key): the file holds ${keys.length}`);
  const findings = map[chosen];
  if (!findings) throw new Error(`no pull request ${chosen} in the findings file`);
  // corpus/test/findings.json lists the test set's tp findings (its picks give the same counts).
  return { key: chosen, pr: null, findings: findings.map((f) => ({ ...f, tp_fp: f.tp_fp ?? 'tp' })) };
}

/** The pull request number and head commit prefix a `pr_key` ends with (`owner_repo_<n>-<sha8>`). */
export function parsePrKey(key: string): { number: number; headPrefix: string } {
  const m = /_(\d+)-([0-9a-f]{7,40})$/.exec(key);
  if (!m) throw new Error(`"${key}" is not a ReviewBench pr_key (owner_repo_<number>-<head>)`);
  return { number: Number(m[1]), headPrefix: m[2]! };
}

/** A git directory read with `git --git-dir` (a bare mirror or a clone's .git). */
export class GitDir {
  constructor(readonly dir: string) {}

  git(args: string[]): string {
    return execFileSync('git', ['--git-dir', this.dir, ...args], {
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    }).toString();
  }

  tryGit(args: string[]): string | null {
    try {
      return this.git(args).trim();
    } catch {
      return null;
    }
  }

  commit(ref: string): string | null {
    return this.tryGit(['rev-parse', '-q', '--verify', `${ref}^{commit}`]);
  }

  isAncestor(a: string, b: string): boolean {
    return this.tryGit(['merge-base', '--is-ancestor', a, b]) !== null;
  }

  /** A file's text at a commit; null when absent or binary. */
  text(commit: string, path: string): string | null {
    let buf: Buffer;
    try {
      buf = execFileSync('git', ['--git-dir', this.dir, 'show', `${commit}:${path}`], {
        maxBuffer: 64 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    } catch {
      return null;
    }
    return buf.includes(0) ? null : buf.toString('utf8');
  }

  paths(commit: string): string[] {
    return this.git(['ls-tree', '-r', '--name-only', commit]).split('\n').filter(Boolean);
  }
}

/**
 * The merge base GitHub would use for the pull request's diff: with GitHub's merge ref
 * (`refs/pull/<n>/merge`, whose first parent is the base branch's tip), the merge base of that tip and the
 * head; otherwise the merge base of the head and the newest commit on the base branch's first-parent line
 * that does not contain the head (the branch as it stood before the pull request was merged into it).
 */
export function mergeBase(git: GitDir, head: string, number: number, baseBranch?: string): string {
  const merge = git.commit(`refs/pull/${number}/merge`);
  if (merge && git.commit(`${merge}^2`) === head) return git.git(['merge-base', `${merge}^1`, head]).trim();
  const branch = baseBranch ?? git.tryGit(['symbolic-ref', '-q', 'HEAD']) ?? 'HEAD';
  for (const c of git.git(['rev-list', '--first-parent', branch]).split('\n').filter(Boolean)) {
    if (git.isAncestor(head, c)) continue;
    const base = git.git(['merge-base', c, head]).trim();
    if (base === head) break;
    return base;
  }
  throw new Error(`no merge base for ${head} on ${branch}: pass --base`);
}

const LICENCE_FILES = [
  'LICENSE',
  'LICENSE.md',
  'LICENSE.txt',
  'LICENCE',
  'LICENCE.md',
  'COPYING',
  'MIT-LICENSE',
];

/** The SPDX id of a permissive licence text, or null for any other (or unknown) licence. */
export function permissiveLicence(text: string): string | null {
  const t = text.replace(/\s+/g, ' ');
  if (/Permission is hereby granted, free of charge/i.test(t)) return 'MIT';
  if (/Apache License/i.test(t) && /Version 2\.0/.test(t)) return 'Apache-2.0';
  if (/Permission to use, copy, modify, and(\/or)? distribute this software/i.test(t)) return 'ISC';
  if (/This is free and unencumbered software released into the public domain/i.test(t)) return 'Unlicense';
  if (/Redistribution and use in source and binary forms/i.test(t)) {
    return /Neither the name/i.test(t) ? 'BSD-3-Clause' : 'BSD-2-Clause';
  }
  return null;
}

/** The repository's licence at a commit: the first licence file at the root, read as a permissive licence. */
export function licenceAt(git: GitDir, commit: string): { spdx: string | null; file: string | null } {
  for (const file of LICENCE_FILES) {
    const text = git.text(commit, file);
    if (text !== null) return { spdx: permissiveLicence(text), file };
  }
  return { spdx: null, file: null };
}

const STOP = new Set(
  `the this that with from into when then than there their these those which while where what been being
  have having does doing done will would could should must also only even just every each some such very
  more most other another because before after above below under over same both either neither since until
  return returns returned true false null undefined none self const function value values line lines file
  files code test tests change changes changed using used uses call calls called instead already without
  within through however therefore currently string number object array method methods field fields
  variable case cases first second example path paths data get set add new use make read write`
    .split(/\s+/)
    .filter(Boolean),
);

/**
 * Up to 6 words a finding about the same issue is likely to carry: the identifiers the message quotes in
 * backticks, then code-like words (camelCase, snake_case, dotted, ALLCAPS), then its longer words. Stored
 * in expected.yml, where they can be edited.
 */
export function goldenKeywords(message: string): string[] {
  const out: string[] = [];
  const add = (word: string, min: number) => {
    const k = word.toLowerCase();
    if (k.length >= min && !STOP.has(k) && !out.includes(k) && out.length < 6) out.push(k);
  };
  const ident = /[A-Za-z_][A-Za-z0-9_]*/g;
  for (const m of message.matchAll(/`([^`]+)`/g)) for (const t of m[1]!.match(ident) ?? []) add(t, 3);
  const words = message.replace(/`[^`]*`/g, ' ').match(/[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]/g) ?? [];
  for (const w of words) {
    if (/^[A-Z]{3,}$/.test(w)) add(w, 3);
    else if (/[a-z][A-Z]|_|\.[A-Za-z]/.test(w)) for (const t of w.match(ident) ?? []) add(t, 4);
  }
  for (const w of words) if (/^[A-Za-z]{7,}$/.test(w)) add(w, 7);
  return out;
}

/** The instruction files at `commit` that apply to the changed paths (what the review reads from the base). */
function instructionFiles(all: ReadonlySet<string>, changed: readonly string[]): string[] {
  const out = new Set<string>();
  if (all.has(COPILOT_INSTRUCTIONS)) out.add(COPILOT_INSTRUCTIONS);
  for (const p of all) if (/^\.github\/instructions\/[^/]+\.instructions\.md$/.test(p)) out.add(p);
  for (const path of changed) {
    const parts = path.split('/').slice(0, -1);
    for (let i = 0; i <= parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      for (const name of DIRECTORY_INSTRUCTION_FILES) {
        const candidate = dir ? `${dir}/${name}` : name;
        if (all.has(candidate)) out.add(candidate);
      }
    }
  }
  return [...out];
}

export type ImportOptions = {
  rb: ReviewBenchPr;
  git: GitDir;
  /** `owner/name` of the repository the git directory holds. */
  repo: string;
  corpus: string;
  split: 'test' | 'full';
  name?: string;
  title: string;
  language?: (typeof CASE_LANGUAGES)[number];
  base?: string;
  baseBranch?: string;
  /** Overwrite a case folder that exists. */
  replace?: boolean;
};

/** Case folder name for a pull request: `rbench-<repository>-<number>`. */
export function reviewBenchCaseName(repo: string, number: number): string {
  const name = repo
    .split('/')[1]!
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `rbench-${name}-${number}`.slice(0, 80);
}

/** Why replay skips an imported case: it has no authored answers (docs/testlab.md, "Real pull requests"). */
export const LIVE_ONLY_REASON =
  'a real pull request from ReviewBench with no authored answers: only a live run (npm run testlab -- --live) reviews it';

function kindOf(title: string): string {
  if (/^(fix|bug ?fix|hotfix)\b/i.test(title)) return 'fix';
  if (/^perf\b/i.test(title)) return 'perf';
  if (/^docs?\b/i.test(title)) return 'docs';
  if (/^refactor\b/i.test(title)) return 'refactor';
  return 'feature';
}

/** The files a case needs: the changed ones, the instruction files the review reads, the golden files. */
function caseFiles(git: GitDir, base: string, head: string, goldenPaths: string[]): CaseFile[] {
  const changed = git.git(['diff', '--name-only', '--no-renames', base, head]).split('\n').filter(Boolean);
  const context = new Set([
    ...instructionFiles(new Set(git.paths(base)), changed),
    ...goldenPaths.filter((p) => git.text(head, p) !== null),
  ]);
  for (const p of changed) context.delete(p);
  const sides: CaseFile[] = [];
  for (const path of changed) {
    const before = git.text(base, path);
    const after = git.text(head, path);
    if (before !== null || after !== null) sides.push({ path, before, after });
  }
  for (const path of context) {
    const text = git.text(base, path) ?? git.text(head, path);
    if (text !== null) sides.push({ path, before: text, after: text });
  }
  return sides;
}

/** The golden findings a case can hold (on a text file of the head, inside it) and the ones dropped. */
function goldenOf(rb: ReviewBenchPr, files: CaseFile[]): { golden: GoldenFinding[]; dropped: string[] } {
  const golden: GoldenFinding[] = [];
  const dropped: string[] = [];
  rb.findings.forEach((f, i) => {
    const file = files.find((s) => s.path === f.file);
    const lines = file?.after?.split('\n').length ?? 0;
    if (!file || file.after === null || f.start_line > lines) {
      dropped.push(
        `${f.file}:${f.start_line}-${f.end_line} (${file?.after ? 'past the end' : 'no text at the head'})`,
      );
      return;
    }
    const keywords = goldenKeywords(f.message);
    golden.push({
      id: `g${String(i + 1).padStart(2, '0')}-${f.category}`.slice(0, 60),
      path: f.file,
      lines: [f.start_line, Math.min(Math.max(f.end_line, f.start_line), lines)],
      label: f.tp_fp,
      severity: f.severity,
      category: f.category,
      keywords: keywords.length > 0 ? keywords : [f.category],
      description: f.message.slice(0, 6000),
      ...(f.scope ? { scope: f.scope } : {}),
      ...(f.difficulty ? { difficulty: f.difficulty } : {}),
      ...(f.context_required ? { contextRequired: f.context_required } : {}),
    });
  });
  return { golden, dropped };
}

/**
 * Writes a ReviewBench pull request as a Test Lab case (`fixtures/testlab/rbench-*`): its diff from the
 * merge base to the reviewed head as before/ and after/, the instruction files the review reads and the
 * files the golden findings point at as context, the golden findings in expected.yml, and where it comes
 * from (repository, pull request, commits, licence) in case.yml's `source`. A repository whose licence is
 * not a permissive one is refused. The case is validated as the corpus loader reads it.
 */
export function importReviewBench(opts: ImportOptions): { case: TestLabCase; dropped: string[] } {
  const { rb, git } = opts;
  const { number, headPrefix } = parsePrKey(rb.key);
  if (rb.pr && rb.pr.number !== number) throw new Error(`${rb.key} is not pull request ${rb.pr.number}`);
  const head = git.commit(rb.pr?.head ?? headPrefix);
  if (!head) throw new Error(`${git.dir} does not hold the head ${rb.pr?.head ?? headPrefix} of ${rb.key}`);
  const base = opts.base ?? rb.pr?.base ?? mergeBase(git, head, number, opts.baseBranch);
  const licence = licenceAt(git, head);
  if (!licence.spdx) {
    throw new Error(
      `${opts.repo} at ${head.slice(0, 12)}: ${licence.file ? `${licence.file} is not a permissive licence` : 'no licence file'}; not imported`,
    );
  }
  const files = caseFiles(git, base, head, [...new Set(rb.findings.map((f) => f.file))]);
  const changedPaths = files.filter((f) => f.before !== f.after).map((f) => f.path);
  const language = opts.language ?? guessLanguage(changedPaths);
  if (!language) throw new Error(`the language of ${rb.key} cannot be told from its files: pass --language`);
  const { golden, dropped } = goldenOf(rb, files);
  const name = opts.name ?? reviewBenchCaseName(opts.repo, number);
  const dir = join(opts.corpus, name);
  if (existsSync(dir)) {
    if (!opts.replace) throw new Error(`the case ${dir} exists already (--replace to write it again)`);
    rmSync(dir, { recursive: true, force: true });
  }
  const commits = git.git(['log', '--reverse', '--format=- %s', `${base}..${head}`]).trim();
  const meta = {
    title: opts.title,
    // The dataset does not hold the description: the commits up to the reviewed head stand for it.
    body: `Commits in this pull request:\n\n${commits}`.slice(0, 20_000),
    language,
    base: git.tryGit(['symbolic-ref', '-q', '--short', 'HEAD']) ?? 'main',
    head: `pull/${number}`,
    kind: kindOf(opts.title),
    source: {
      dataset: 'reviewbench',
      key: rb.key,
      split: opts.split,
      repo: opts.repo,
      pr: number,
      base,
      head,
      licence: licence.spdx,
      licenceFile: licence.file!,
    },
    liveOnly: LIVE_ONLY_REASON,
  };
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(join(dir, 'case.yml'), stringify(meta, { lineWidth: 0 }));
    writeFileSync(join(dir, 'expected.yml'), stringify({ golden }, { lineWidth: 0 }));
    // The repository's licence travels with the copy of its code.
    writeFileSync(join(dir, 'LICENSE'), git.text(head, licence.file!) ?? '');
    for (const f of files) {
      for (const side of ['before', 'after'] as const) {
        const text = f[side];
        if (text === null) continue;
        const file = join(dir, side, f.path);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
      }
    }
    return { case: loadCase(dir), dropped };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
