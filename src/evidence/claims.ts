/**
 * Does a finding's text claim that something was run, executed or observed at runtime? (review-engine 2.6:
 * "execution claims" are the findings evidence artifacts back, and the ones VERDICT_EVIDENCE_REQUIRE_ARTIFACTS
 * marks unverified when nothing backs them.)
 *
 * A model reviewing a diff reads code; it runs nothing. A finding that says "I ran the tests and they
 * failed", "the build fails with TS2345" or "the stack trace shows ..." reports an observation, and only a
 * stored command output can back it. A finding that says "this would break the build" or "run the tests
 * to confirm" predicts or asks, and claims nothing. The detector looks for the first kind only:
 *
 * - `first_person_run`: I / we + a past execution verb: "I ran", "we executed", "I've run", "we reproduced",
 *   "I was able to reproduce", "we could reproduce".
 * - `check_was_run`: a check or program was run: "the tests were run", "the build has been executed", "it
 *   was reproduced", "observed at runtime", "reproduced locally".
 * - `running_then_result`: running something and a past-tense result: "running `npm test` failed", "executing
 *   the script printed ...".
 * - `check_outcome`: a check's outcome reported as fact: "the tests fail<ed|ing>", "the build is failing",
 *   "lint passed", "CI is red", "compilation failed", "tsc errors out".
 * - `run_output`: a run's output or logs cited: "the test output shows", "the CI log contains", "the stack
 *   trace shows", "I got this error".
 * - `exit_code`: a process's exit reported: "exited with code 1", "returned exit code 2", "exit status was 1".
 * - `runtime_observation`: "at runtime I saw", "in my local run".
 *
 * Hedged or negated wording does not count: a match is dropped when one of the four words before it in
 * the same sentence is a modal, a negation or a request (would, could, might, will, should, can, if,
 * unless, not, never, didn't, ensure, verify, whether, ...) or when its own words hold a negation ("the
 * tests were not run"). Conditional sentences ("If the flag is unset, the build fails") are not claims for
 * the generic rules (`check_outcome`, `running_then_result`, `run_output`, `exit_code`); a first-person
 * report is one even in a when-clause ("When I ran the tests they failed"). Fenced code blocks are
 * ignored (a suggested patch is not prose); inline code keeps its text.
 *
 * The detector is a heuristic over English prose and errs towards "no claim" on generic present-tense
 * statements about code ("this function returns null"), which are reading, not running.
 */

export type ClaimRule =
  | 'first_person_run'
  | 'check_was_run'
  | 'running_then_result'
  | 'check_outcome'
  | 'run_output'
  | 'exit_code'
  | 'runtime_observation';

/** Words that, among the four before a match (same sentence), make it a hypothesis, a request or a denial. */
const HEDGES = new Set(
  (
    'would could might may will shall should can cannot must likely unlikely probably possibly potentially ' +
    'perhaps maybe expected expect expects if unless whether otherwise not never no ensure ensures sure verify ' +
    'confirm check please once until suppose assuming hypothetically'
  ).split(' '),
);
const NEGATION = /\b(?:not|never|no)\b|n't\b/i;
/** Sentence openers that make the rest of the sentence a condition, for the generic rules. */
const CONDITIONAL_OPENER = /^\s*(?:if|unless|when|whenever|once|should|suppose|assuming|in case)\b/i;

const CHECK = String.raw`(?:unit\s+|integration\s+|e2e\s+|new\s+|existing\s+|whole\s+|full\s+)?(?:tests?|test\s+suite|suite|specs?|build|lint(?:er)?|eslint|type[-\s]?check(?:ing|er)?|tsc|mypy|ci|pipeline|compilation|compiler|benchmarks?)`;
const PAST_RESULT = String.raw`(?:failed|showed|shown|produced|printed|output|yielded|reported|threw|crashed|errored|exited|hung|panicked|returned|gave|passed|succeeded|resulted\s+in|timed\s+out|segfaulted)`;

interface Rule {
  name: ClaimRule;
  pattern: RegExp;
  /** Generic rules: a sentence that opens with a condition is not a claim. */
  generic: boolean;
}

const RULES: Rule[] = [
  {
    name: 'first_person_run',
    pattern: new RegExp(
      String.raw`\b(?:I|we)\s+(?:(?:just|also|then|actually|locally|first|again|manually)\s+)?(?:ran|re-?ran|executed|re-?executed|tested|reproduced|observed|triggered)\b` +
        String.raw`|\b(?:I|we)\s*(?:have|'ve|had|'d)\s+(?:(?:just|also|now|already|locally|manually)\s+)?(?:run|re-?run|executed|tested|reproduced|observed|triggered)\b` +
        String.raw`|\b(?:I|we)\s+(?:was|were)\s+able\s+to\s+(?:reproduce|run|trigger|observe)\b` +
        String.raw`|\b(?:I|we)\s+could\s+reproduce\b`,
      'gi',
    ),
    generic: false,
  },
  {
    name: 'check_was_run',
    pattern: new RegExp(
      String.raw`\b${CHECK}s?\s+(?:was|were|has\s+been|have\s+been|had\s+been)\s+(?:\w+\s+)?(?:run|re-?run|executed)\b` +
        String.raw`|\b(?:it|this|the\s+(?:bug|issue|failure|crash|error|problem))\s+(?:was|has\s+been)\s+(?:\w+\s+)?reproduced\b` +
        String.raw`|\breproduced\s+(?:it\s+|this\s+)?(?:locally|on\s+(?:main|master|node|python|go|ci|linux|macos|windows)|in\s+ci|against)\b` +
        String.raw`|\bobserved\s+(?:at|during)\s+(?:runtime|run\s*time|execution)\b` +
        String.raw`|\bobserved\s+in\s+(?:a|the|my|our)\s+(?:local\s+|test\s+|ci\s+)?run\b`,
      'gi',
    ),
    generic: false,
  },
  {
    name: 'running_then_result',
    pattern: new RegExp(
      String.raw`\b(?:running|executing|invoking|re-?running)\s+[^.!?\n]{1,80}?\s+${PAST_RESULT}\b`,
      'gi',
    ),
    generic: true,
  },
  {
    name: 'check_outcome',
    pattern: new RegExp(
      String.raw`\b${CHECK}\s+(?:now\s+|currently\s+|still\s+|all\s+)?(?:fails|failed|is\s+failing|are\s+failing|was\s+failing|were\s+failing|passes|passed|is\s+passing|are\s+passing|errored|errors\s+out|crashed|crashes|breaks|broke|timed\s+out|times\s+out|is\s+red|are\s+red|went\s+red|is\s+green|are\s+green)\b`,
      'gi',
    ),
    generic: true,
  },
  {
    name: 'run_output',
    pattern: new RegExp(
      String.raw`\b${CHECK}\s+(?:output|logs?|run|results?|report)\s+(?:shows?|showed|contains?|contained|prints?|printed|says|said|includes?|included|indicates?|indicated|confirms?|confirmed|lists?|listed)\b` +
        String.raw`|\b(?:stack\s*trace|traceback|backtrace|core\s+dump)\s+(?:shows?|showed|points?|pointed|contains?|contained)\b` +
        String.raw`|\b(?:I|we)\s+(?:got|saw|hit|received)\s+(?:this|the\s+following|an?|\d+)\s+(?:\w+\s+)?(?:errors?|failures?|exceptions?|stack\s*traces?|tracebacks?|crash(?:es)?|warnings?|panics?|segfaults?)\b`,
      'gi',
    ),
    generic: true,
  },
  {
    name: 'exit_code',
    pattern: new RegExp(
      String.raw`\bexited\s+(?:with\s+)?(?:a\s+)?(?:(?:non-?zero|error)\s+)?(?:exit\s+)?(?:code|status)(?:\s+-?\d+)?\b` +
        String.raw`|\breturned\s+(?:a\s+)?(?:non-?zero\s+)?exit\s+(?:code|status)\b` +
        String.raw`|\bexit\s+(?:code|status)\s+was\s+-?\d+\b`,
      'gi',
    ),
    generic: true,
  },
  {
    name: 'runtime_observation',
    pattern: new RegExp(
      String.raw`\b(?:at|during)\s+run-?\s?time\b[^.!?\n]{0,40}?\b(?:I|we)\s+(?:saw|observed|got|hit|noticed)\b` +
        String.raw`|\b(?:I|we)\s+(?:saw|observed|got|hit|noticed)\b[^.!?\n]{0,40}?\b(?:at|during)\s+run-?\s?time\b` +
        String.raw`|\bin\s+(?:my|our)\s+(?:local\s+)?(?:test\s+)?runs?\b` +
        String.raw`|\bin\s+(?:a|the)\s+(?:local|test|ci)\s+run\b`,
      'gi',
    ),
    generic: false,
  },
];

/** Prose only: fenced code blocks dropped, inline code unwrapped, whitespace runs made single spaces. */
function prose(text: string): string {
  return text
    .replace(/(^|\n)\s*(```|~~~)[^\n]*\n[\s\S]*?(\n\s*\2[^\n]*(?=\n|$)|$)/g, '$1\n')
    .replace(/`([^`\n]*)`/g, '$1')
    .replace(/[ \t]+/g, ' ');
}

/** Where the sentence holding `index` starts: after the last `.`, `!`, `?` or `;` followed by a space, or a newline. */
function sentenceStart(text: string, index: number): number {
  let start = 0;
  const boundary = /[.!?;](?=\s)|\n/g;
  for (let m = boundary.exec(text); m !== null && m.index < index; m = boundary.exec(text)) {
    start = m.index + m[0].length;
  }
  return start;
}

function hedged(text: string, match: RegExpExecArray, rule: Rule): boolean {
  if (NEGATION.test(match[0])) return true;
  const before = text.slice(sentenceStart(text, match.index), match.index);
  if (rule.generic && CONDITIONAL_OPENER.test(before)) return true;
  const words = before.toLowerCase().match(/[a-z']+/g) ?? [];
  return words.slice(-4).some((word) => HEDGES.has(word) || word.endsWith("n't"));
}

/** The first rule the text claims an execution by, and the words that matched; null for none. */
export function detectExecutionClaim(text: string): { rule: ClaimRule; match: string } | null {
  const body = prose(text);
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(body); m !== null; m = rule.pattern.exec(body)) {
      if (!hedged(body, m, rule)) return { rule: rule.name, match: m[0] };
    }
  }
  return null;
}

/** True when the text claims something was run, executed or observed at runtime (see the rules above). */
export function claimsExecution(text: string): boolean {
  return detectExecutionClaim(text) !== null;
}
