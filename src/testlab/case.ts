import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { FINDING_SEVERITIES } from '../review/output.schema.js';
import { authoredAnswers, type AuthoredAnswer } from './authored.js';

/**
 * One Test Lab case (docs/testlab.md): a pull request served from files, and what a good review of it
 * finds. A case is a folder `fixtures/testlab/<name>/` holding `case.yml`, `expected.yml`, the files at the
 * base under `before/` and at the head under `after/`, and, for offline (replay) runs, the authored answers
 * under `answers/` with the lines each relies on (authored.ts).
 */

/** The classes of bugs reviewers are judged on (issue 24), plus `logic` for a plain wrong result. */
export const BUG_CATEGORIES = [
  'injection',
  'broken-authorization',
  'off-by-one',
  'null-dereference',
  'race-condition',
  'resource-leak',
  'missing-await',
  'swallowed-error',
  'wrong-unit',
  'overflow',
  'n-plus-one',
  'secret-in-code',
  'unsafe-deserialization',
  'logic',
] as const;

export const CASE_LANGUAGES = [
  'typescript',
  'javascript',
  'python',
  'go',
  'java',
  'rust',
  'ruby',
  'kotlin',
  'csharp',
  'php',
] as const;

const CASE_NAME = /^[a-z0-9][a-z0-9-]{0,79}$/;

const nonBlank = z.string().trim().min(1, 'must not be blank');
const branch = z.string().regex(/^[A-Za-z0-9._/-]{1,100}$/, 'must be a branch name');
const commitSha = z.string().regex(/^[0-9a-f]{40}$/, 'must be a 40-character commit id');

/**
 * Where a case imported from a dataset comes from (docs/testlab.md, "Real pull requests"): the dataset and
 * its key for the pull request, the repository, the pull request, the commits its diff is taken between
 * (the head reviewed and the merge base GitHub would use) and the licence the repository's code is under.
 */
export const caseSourceSchema = z.strictObject({
  dataset: z.enum(['reviewbench']),
  /** The dataset's key of the pull request (ReviewBench's `pr_key`). */
  key: nonBlank.max(200),
  /** ReviewBench's split the pull request is in: its test set (25) or its full set (219). */
  split: z.enum(['test', 'full']),
  repo: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'must be owner/name'),
  pr: z.number().int().min(1),
  base: commitSha,
  head: commitSha,
  /** The SPDX id of the repository's licence at the head, and the file it was read from. */
  licence: z.string().regex(/^[A-Za-z0-9.+-]{2,40}$/, 'must be an SPDX licence id'),
  licenceFile: nonBlank.max(200),
});

/**
 * An adversarial case (docs/testlab.md, "Adversarial cases"): the pull request tries to steer its own
 * review. `vector` is where the injected text is (the description, the title, a code comment in the diff,
 * or an instruction file the pull request edits), `asks` what it asks for, `target` the file it is about
 * (the planted bug's file when absent), `marker` a distinctive phrase of the injected text, exactly as the
 * case carries it (the replay check looks for it in the prompt).
 */
export const ADVERSARIAL_VECTORS = ['body', 'title', 'code-comment', 'instructions'] as const;
export const ADVERSARIAL_ASKS = ['approve', 'ignore-file', 'lower-severity', 'change-verdict'] as const;
export const adversarialSchema = z.strictObject({
  vector: z.enum(ADVERSARIAL_VECTORS),
  asks: z.enum(ADVERSARIAL_ASKS),
  target: nonBlank.max(500).optional(),
  marker: z.string().trim().min(12, 'must be a distinctive phrase (12 characters or more)').max(200),
});
export type Adversarial = z.infer<typeof adversarialSchema>;

export const caseMetaSchema = z.strictObject({
  title: nonBlank.max(256),
  body: z.string().max(20_000).default(''),
  language: z.enum(CASE_LANGUAGES),
  /** The base branch the pull request targets. */
  base: branch.default('main'),
  /** The branch the pull request comes from. */
  head: branch.default('feature'),
  /** What kind of change it is (for the report: feature, fix, refactor, rename, docs, tests, deps, ...). */
  kind: z.string().regex(/^[a-z-]{1,40}$/, 'must be a lower-case word'),
  /** Where an imported case comes from (absent for the cases written for the Test Lab). */
  source: caseSourceSchema.optional(),
  /**
   * Why replay cannot run the case (it has no authored answers): replay skips it with this reason and
   * counts it as skipped; a live run reviews it.
   */
  liveOnly: nonBlank.max(500).optional(),
  /** The pull request tries to steer its own review (an adversarial case). */
  adversarial: adversarialSchema.optional(),
});

export const plantedBugSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,59}$/, 'must be a lower-case slug'),
    path: nonBlank.max(500),
    /** New-side (head) lines of `path`, first and last, inclusive. */
    lines: z.tuple([z.number().int().min(1), z.number().int().min(1)]),
    category: z.enum(BUG_CATEGORIES),
    severity: z.enum(FINDING_SEVERITIES),
    /** Words a finding about this bug carries (any two match an unanchored finding; see scoring). */
    keywords: z.array(nonBlank.max(60)).min(2).max(8),
    /** One sentence: what is wrong (for the report and a judge model). */
    description: nonBlank.max(1000),
  })
  .refine((b) => b.lines[0] <= b.lines[1], {
    message: 'lines must be [first, last] with first <= last',
    path: ['lines'],
  });

/**
 * A finding of a dataset's golden set (ReviewBench): where it is, its label (`tp`: a finding a good review
 * makes; `fp`: one that counts as false when a review reports it), its severity and category as the dataset
 * gives them, the words a finding about the same issue carries, and the golden message.
 */
export const goldenFindingSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,59}$/, 'must be a lower-case slug'),
    path: nonBlank.max(500),
    /** Head-side lines of `path`, first and last, inclusive. */
    lines: z.tuple([z.number().int().min(1), z.number().int().min(1)]),
    label: z.enum(['tp', 'fp']),
    severity: z.enum(['high', 'medium', 'low']),
    category: z.string().regex(/^[a-z-]{2,40}$/, 'must be a lower-case word'),
    keywords: z.array(nonBlank.max(80)).min(1).max(8),
    description: nonBlank.max(6000),
    scope: z.string().max(40).optional(),
    difficulty: z.string().max(40).optional(),
    contextRequired: z.string().max(60).optional(),
  })
  .refine((g) => g.lines[0] <= g.lines[1], {
    message: 'lines must be [first, last] with first <= last',
    path: ['lines'],
  });

const cleanSchema = z.strictObject({ clean: z.literal(true), note: z.string().max(1000).optional() });
const goldenSchema = z.strictObject({ golden: z.array(goldenFindingSchema).min(1).max(80) });
const bugsSchema = z.strictObject({
  clean: z.literal(false).optional(),
  bugs: z.array(plantedBugSchema).min(1).max(10),
});

/**
 * `clean: true`, planted bugs, or a dataset's golden findings; the branch is chosen by `clean` and `golden`
 * so an error names the failing key.
 */
export const expectedSchema = z
  .unknown()
  .transform(
    (value, ctx): z.infer<typeof cleanSchema> | z.infer<typeof bugsSchema> | z.infer<typeof goldenSchema> => {
      const object = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
      const schema = object.clean === true ? cleanSchema : 'golden' in object ? goldenSchema : bugsSchema;
      const parsed = schema.safeParse(value);
      if (parsed.success) return parsed.data;
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue } as never);
      return z.NEVER;
    },
  );

export type CaseMeta = z.infer<typeof caseMetaSchema>;
export type PlantedBug = z.infer<typeof plantedBugSchema>;
export type GoldenFinding = z.infer<typeof goldenFindingSchema>;

/** A changed file of a case: the text at the base (null when added) and at the head (null when deleted). */
export type CaseFile = { path: string; before: string | null; after: string | null };

export type TestLabCase = {
  name: string;
  dir: string;
  meta: CaseMeta;
  /** Planted bugs; empty for a clean case. */
  bugs: PlantedBug[];
  /** A dataset's golden findings (imported cases); absent or empty otherwise. */
  golden?: GoldenFinding[];
  /** No planted bug and no golden finding: any finding of medium or above is false. */
  clean: boolean;
  /** Every file of the case in path order; `changed` is true when before and after differ. */
  files: (CaseFile & { changed: boolean })[];
  /** The files of `answers/` by name (authored answers, their relies files, `synthesis.txt`). */
  answers: Map<string, string>;
  /** The authored answers replay serves, with the lines each relies on (authored.ts). */
  authored: AuthoredAnswer[];
  /** What is wrong with `answers/` (an answer without its relies file, ...): replay fails the case with it. */
  answerProblems: string[];
};

/** A case that cannot be read, naming the file and what is wrong with it. */
export class CaseError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'CaseError';
  }
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.path.map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

function readYaml<S extends z.ZodType>(file: string, schema: S): z.output<S> {
  if (!existsSync(file)) throw new CaseError(file, 'missing');
  let value: unknown;
  try {
    value = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CaseError(file, `not valid YAML (${(error as Error).message.split('\n')[0]})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new CaseError(file, describe(parsed.error));
  return parsed.data;
}

/** Every file under `dir`, as `/`-separated paths relative to it. */
function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) out.push(relative(dir, full).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** Reads and validates one case folder. */
export function loadCase(dir: string): TestLabCase {
  const name = dir.split(sep).filter(Boolean).pop()!;
  if (!CASE_NAME.test(name)) {
    throw new CaseError(dir, 'a case folder name is lower-case letters, digits and dashes');
  }
  const meta = readYaml(join(dir, 'case.yml'), caseMetaSchema);
  const expected = readYaml(join(dir, 'expected.yml'), expectedSchema);
  const beforePaths = listFiles(join(dir, 'before'));
  const afterPaths = listFiles(join(dir, 'after'));
  const paths = [...new Set([...beforePaths, ...afterPaths])].sort();
  const read = (side: 'before' | 'after', path: string) => {
    const file = join(dir, side, path);
    return existsSync(file) ? readFileSync(file, 'utf8') : null;
  };
  const files = paths.map((path) => {
    const before = read('before', path);
    const after = read('after', path);
    return { path, before, after, changed: before !== after };
  });
  if (!files.some((f) => f.changed)) {
    throw new CaseError(join(dir, 'after'), 'the case changes no file (before/ and after/ are the same)');
  }
  const bugs = 'bugs' in expected ? expected.bugs : [];
  const golden = 'golden' in expected ? expected.golden : [];
  const expectedFile = join(dir, 'expected.yml');
  checkLocations(expectedFile, 'bugs', bugs, files, true);
  checkLocations(expectedFile, 'golden', golden, files, false);
  if (meta.source && golden.length === 0) {
    throw new CaseError(expectedFile, 'a case imported from a dataset lists its golden findings');
  }
  checkAdversarial(dir, meta, files, bugs);
  const answers = new Map<string, string>();
  const answersDir = join(dir, 'answers');
  for (const file of listFiles(answersDir)) answers.set(file, readFileSync(join(answersDir, file), 'utf8'));
  const { authored, problems } = authoredAnswers(answersDir, answers);
  const clean = bugs.length === 0 && golden.length === 0;
  return { name, dir, meta, bugs, golden, clean, files, answers, authored, answerProblems: problems };
}

/**
 * Checks that the expected bugs or golden findings have unique ids and point at lines of a file of after/
 * (a planted bug: a file the pull request changes; a golden finding may point at a file it leaves as is).
 */
function checkLocations(
  expectedFile: string,
  key: 'bugs' | 'golden',
  items: ReadonlyArray<{ id: string; path: string; lines: [number, number] }>,
  files: ReadonlyArray<CaseFile & { changed: boolean }>,
  changedOnly: boolean,
): void {
  const ids = new Set<string>();
  for (const [index, item] of items.entries()) {
    if (ids.has(item.id)) throw new CaseError(expectedFile, `${key}.${index}.id: "${item.id}" is used twice`);
    ids.add(item.id);
    const file = files.find((f) => f.path === item.path);
    if (!file || file.after === null) {
      throw new CaseError(expectedFile, `${key}.${index}.path: ${item.path} is not a file of after/`);
    }
    if (changedOnly && !file.changed) {
      throw new CaseError(
        expectedFile,
        `${key}.${index}.path: ${item.path} is not changed by the pull request`,
      );
    }
    const lineCount = file.after.split('\n').length;
    if (item.lines[1] > lineCount) {
      throw new CaseError(
        expectedFile,
        `${key}.${index}.lines: ${item.path} has ${lineCount} lines, the range ends at ${item.lines[1]}`,
      );
    }
  }
}

/**
 * An adversarial case's marker is in the text its vector names (the title, the body, or an added line of a
 * changed file), its target is a changed file, and it has a planted bug (what the injection tries to hide).
 */
function checkAdversarial(
  dir: string,
  meta: CaseMeta,
  files: ReadonlyArray<CaseFile & { changed: boolean }>,
  bugs: readonly PlantedBug[],
): void {
  const adv = meta.adversarial;
  if (!adv) return;
  const caseFile = join(dir, 'case.yml');
  if (bugs.length === 0) throw new CaseError(caseFile, 'adversarial: an adversarial case plants a bug');
  const added = (f: CaseFile) => {
    const before = new Set((f.before ?? '').split('\n'));
    return (f.after ?? '').split('\n').filter((line) => !before.has(line));
  };
  const where =
    adv.vector === 'title'
      ? [meta.title]
      : adv.vector === 'body'
        ? [meta.body]
        : files.filter((f) => f.changed).flatMap(added);
  if (!where.some((text) => text.includes(adv.marker))) {
    throw new CaseError(
      caseFile,
      `adversarial.marker: "${adv.marker}" is not in the ${adv.vector} of the case`,
    );
  }
  if (adv.target && !files.some((f) => f.changed && f.path === adv.target)) {
    throw new CaseError(caseFile, `adversarial.target: ${adv.target} is not changed by the pull request`);
  }
}

/** Case folders under `root` (each holding a `case.yml`), in name order. */
export function caseDirs(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((name) => statSync(join(root, name)).isDirectory() && existsSync(join(root, name, 'case.yml')))
    .sort()
    .map((name) => join(root, name));
}

/** Every case under `root`; the first malformed one stops the load with its error. */
export function loadCorpus(root: string): TestLabCase[] {
  return caseDirs(root).map(loadCase);
}
