import type { FilterCondition, FilterRule } from './filters.schema.js';

/**
 * Evaluates a filter-rule list (operator-api 2.10) against what is known of a pull request.
 *
 * A list matches when any rule matches; a rule matches when all its conditions match; an empty list
 * matches every PR. Each condition is true, false or unknown: unknown when a fact it needs is missing
 * (null or undefined). A rule with a false condition does not match; otherwise a rule with an unknown
 * condition is deferred. Overall: any matching rule gives `match`; else any deferred rule gives `deferred`
 * (with the names of the missing facts, as `PrFacts` keys); else `no_match`. Missing metadata never denies.
 *
 * Semantics per field:
 * - label: `is` when the PR has a label equal (case-insensitive) to any value; `is_not` when it has none of
 *   them. An empty label list is known (no labels).
 * - author, repository: `is` when equal (case-insensitive) to any value; `is_not` when equal to none.
 * - targetBranch, sourceBranch: `is` when the branch matches any glob; `is_not` when it matches none.
 * - path: `is` when any changed path matches any glob; `is_not` when no changed path matches any glob (a PR
 *   that also touches an excluded path does not match `is_not`). An empty path list is known.
 * - title: `contains` when the title includes any value (case-insensitive); `not_contains` when none.
 * - keyword: the same over the title and the body. With one of the two missing, a value found in the
 *   other still decides (`contains` true, `not_contains` false); otherwise the condition is unknown.
 * - draft: `is` when the PR is a draft; `is_not` when it is not.
 * - filesChanged: `at_most n` when filesChanged <= n; `more_than n` when filesChanged > n.
 */

export type PrFacts = {
  labels?: string[] | null;
  author?: string | null;
  /** `owner/repo` */
  repository?: string | null;
  targetBranch?: string | null;
  sourceBranch?: string | null;
  /** Changed file paths. */
  paths?: string[] | null;
  title?: string | null;
  /** Pass '' for a PR without a description (GitHub sends `body: null`); null means not known. */
  body?: string | null;
  draft?: boolean | null;
  filesChanged?: number | null;
};

export type PrFactName = keyof PrFacts;

export type MatchResult =
  { decision: 'match' } | { decision: 'no_match' } | { decision: 'deferred'; missing: string[] };

type Outcome = true | false | { missing: PrFactName[] };

const unknown = (...missing: PrFactName[]): Outcome => ({ missing });

function equalsAny(actual: string, values: readonly string[]): boolean {
  const a = actual.toLowerCase();
  return values.some((v) => v.toLowerCase() === a);
}

function containsAny(text: string, values: readonly string[]): boolean {
  const t = text.toLowerCase();
  return values.some((v) => t.includes(v.toLowerCase()));
}

function matchesAnyGlob(value: string, globs: readonly string[]): boolean {
  return globs.some((glob) => globMatch(glob, value));
}

/** `is` holds when `hit` is true, `is_not` when it is false. */
function polarity(operator: 'is' | 'is_not' | 'contains' | 'not_contains', hit: boolean): boolean {
  return operator === 'is' || operator === 'contains' ? hit : !hit;
}

function isKnown<T>(value: T | null | undefined): value is T {
  return value !== null && value !== undefined;
}

function evaluateCondition(condition: FilterCondition, pr: PrFacts): Outcome {
  switch (condition.field) {
    case 'label': {
      if (!isKnown(pr.labels)) return unknown('labels');
      return polarity(
        condition.operator,
        pr.labels.some((label) => equalsAny(label, condition.values)),
      );
    }
    case 'author':
    case 'repository': {
      const actual = pr[condition.field];
      if (!isKnown(actual)) return unknown(condition.field);
      return polarity(condition.operator, equalsAny(actual, condition.values));
    }
    case 'targetBranch':
    case 'sourceBranch': {
      const branch = pr[condition.field];
      if (!isKnown(branch)) return unknown(condition.field);
      return polarity(condition.operator, matchesAnyGlob(branch, condition.values));
    }
    case 'path': {
      if (!isKnown(pr.paths)) return unknown('paths');
      return polarity(
        condition.operator,
        pr.paths.some((path) => matchesAnyGlob(path, condition.values)),
      );
    }
    case 'title': {
      if (!isKnown(pr.title)) return unknown('title');
      return polarity(condition.operator, containsAny(pr.title, condition.values));
    }
    case 'keyword': {
      const parts = [pr.title, pr.body].filter(isKnown);
      const hit = parts.some((part) => containsAny(part, condition.values));
      if (hit) return polarity(condition.operator, true);
      const missing = (['title', 'body'] as const).filter((fact) => !isKnown(pr[fact]));
      if (missing.length > 0) return unknown(...missing);
      return polarity(condition.operator, false);
    }
    case 'draft': {
      if (!isKnown(pr.draft)) return unknown('draft');
      return polarity(condition.operator, pr.draft);
    }
    case 'filesChanged': {
      const count = pr.filesChanged;
      if (!isKnown(count) || !Number.isFinite(count)) return unknown('filesChanged');
      const limit = Number(condition.values[0]);
      return condition.operator === 'at_most' ? count <= limit : count > limit;
    }
    default: {
      const never: never = condition;
      return never;
    }
  }
}

function evaluateRule(rule: FilterRule, pr: PrFacts): MatchResult {
  const missing: PrFactName[] = [];
  for (const condition of rule.conditions) {
    const outcome = evaluateCondition(condition, pr);
    if (outcome === false) return { decision: 'no_match' };
    if (outcome !== true) missing.push(...outcome.missing);
  }
  return missing.length > 0 ? { decision: 'deferred', missing } : { decision: 'match' };
}

export function matchRules(rules: FilterRule[], pr: PrFacts): MatchResult {
  if (rules.length === 0) return { decision: 'match' };
  const missing = new Set<string>();
  for (const rule of rules) {
    const outcome = evaluateRule(rule, pr);
    if (outcome.decision === 'match') return { decision: 'match' };
    if (outcome.decision === 'deferred') for (const name of outcome.missing) missing.add(name);
  }
  return missing.size > 0 ? { decision: 'deferred', missing: [...missing] } : { decision: 'no_match' };
}

/*
 * Globs. `*` matches any run of characters within a segment (no `/`), `?` one character other than `/`,
 * and a whole `**` segment any number of segments: `a/**` matches everything below `a/`, `** /b` (without
 * the space) `b` at any depth, `a/** /b` (likewise) `a/b`, `a/x/b`, `a/x/y/b`; `**` alone matches
 * everything. Matching is case-sensitive and runs in O(glob length x value length) with no backtracking.
 */

type GlobToken =
  | { kind: 'char'; char: string }
  | { kind: 'one' } // ?
  | { kind: 'star' } // * within a segment
  | { kind: 'any' } // trailing or lone **: any characters, `/` included
  | { kind: 'dirs' }; // `**/`: nothing, or any characters ending with `/`

const compiled = new Map<string, GlobToken[]>();
const MAX_COMPILED = 1000;

function compileGlob(glob: string): GlobToken[] {
  const cached = compiled.get(glob);
  if (cached) return cached;
  const tokens: GlobToken[] = [];
  const segments = glob.split('/');
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '**') {
      tokens.push(last ? { kind: 'any' } : { kind: 'dirs' });
      return;
    }
    for (const char of segment) {
      if (char === '*') {
        if (tokens[tokens.length - 1]?.kind !== 'star') tokens.push({ kind: 'star' });
      } else if (char === '?') tokens.push({ kind: 'one' });
      else tokens.push({ kind: 'char', char });
    }
    if (!last) tokens.push({ kind: 'char', char: '/' });
  });
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(glob, tokens);
  return tokens;
}

/** Whether `value` matches `glob` as a whole (see the glob rules above). */
export function globMatch(glob: string, value: string): boolean {
  return runGlob(compileGlob(glob), value);
}

/**
 * A glob compiled for many values (`globMatch` without its cache of compiled globs). Before the match it
 * checks what every match needs: the value starts with the glob's literal prefix (its characters before
 * the first wildcard) and holds each literal run of the glob (characters between wildcards), so that
 * most values that do not match are refused by a string search.
 */
export function globMatcher(glob: string): (value: string) => boolean {
  const tokens = compileGlob(glob);
  const runs: string[] = [];
  let run = '';
  for (const token of tokens) {
    if (token.kind === 'char') run += token.char;
    else {
      runs.push(run);
      run = '';
    }
  }
  runs.push(run);
  const prefix = runs[0]!;
  const inner = runs.slice(1).filter((r) => r !== '');
  return (value) =>
    value.startsWith(prefix) && inner.every((r) => value.includes(r)) && runGlob(tokens, value);
}

function runGlob(tokens: readonly GlobToken[], value: string): boolean {
  const chars = [...value];
  const n = chars.length;
  // reachable[i]: the tokens so far can match exactly chars[0..i).
  let reachable = new Uint8Array(n + 1);
  reachable[0] = 1;
  for (const token of tokens) {
    const next = new Uint8Array(n + 1);
    let any = false;
    switch (token.kind) {
      case 'char':
      case 'one':
        for (let i = 0; i < n; i += 1) {
          if (!reachable[i]) continue;
          const c = chars[i]!;
          if (token.kind === 'char' ? c === token.char : c !== '/') {
            next[i + 1] = 1;
            any = true;
          }
        }
        break;
      case 'star':
      case 'any': {
        let running = false;
        for (let j = 0; j <= n; j += 1) {
          // `*` stops at a `/`; `**` runs on.
          if (token.kind === 'star' && j > 0 && chars[j - 1] === '/') running = false;
          if (reachable[j]) running = true;
          if (running) {
            next[j] = 1;
            any = true;
          }
        }
        break;
      }
      case 'dirs': {
        let before = false; // some reachable[i] with i < j
        for (let j = 0; j <= n; j += 1) {
          if (reachable[j] || (before && j > 0 && chars[j - 1] === '/')) {
            next[j] = 1;
            any = true;
          }
          if (reachable[j]) before = true;
        }
        break;
      }
    }
    if (!any) return false;
    reachable = next;
  }
  return reachable[n] === 1;
}
