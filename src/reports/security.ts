/**
 * Whether a finding is a security finding, from its category and its text (docs/reports.md). The review
 * output has no security flag, so this is a heuristic and says so: `true` when the category is a security
 * category or the title/body names a security problem; `false` when the category is a known non-security
 * category and the text names none; `null` (unknown) otherwise, e.g. an empty or unfamiliar category.
 */
export type SecurityClass = true | false | null;

/** Category words that make a finding a security finding. */
const SECURITY_CATEGORY_WORDS = new Set([
  'security',
  'sec',
  'vulnerability',
  'vulnerabilities',
  'vuln',
  'auth',
  'authn',
  'authz',
  'authentication',
  'authorization',
  'authorisation',
  'injection',
  'sqli',
  'xss',
  'csrf',
  'ssrf',
  'rce',
  'crypto',
  'cryptography',
  'secret',
  'secrets',
  'credentials',
  'privacy',
  'permissions',
  'owasp',
  'cwe',
]);

/** Categories (normalised: lowercase, words joined by `-`) known to be about something else. */
const OTHER_CATEGORIES = new Set([
  'correctness',
  'bug',
  'bugs',
  'logic',
  'logic-error',
  'performance',
  'perf',
  'style',
  'formatting',
  'readability',
  'maintainability',
  'naming',
  'documentation',
  'docs',
  'test',
  'tests',
  'testing',
  'test-coverage',
  'typing',
  'types',
  'type-safety',
  'error-handling',
  'reliability',
  'concurrency',
  'race-condition',
  'compatibility',
  'accessibility',
  'a11y',
  'i18n',
  'localization',
  'build',
  'ci',
  'complexity',
  'duplication',
  'design',
  'architecture',
  'api',
  'api-design',
  'usability',
  'ux',
  'observability',
  'logging',
  'data-integrity',
  'resource-leak',
  'memory',
  'memory-leak',
  'best-practice',
  'best-practices',
  'code-quality',
  'dead-code',
  'configuration',
]);

/** Phrases in a title or body that name a security problem. */
const SECURITY_TEXT = [
  /\b(?:sql|nosql|command|code|shell|os|ldap|xpath|header|template|prompt|log|html|script)[ -]injection\b/,
  /\bsqli\b/,
  /\bxss\b|\bcross[- ]site\b/,
  /\bcsrf\b|\bxsrf\b/,
  /\bssrf\b|\bserver[- ]side request forgery\b/,
  /\bremote code execution\b|\brce\b/,
  /\b(?:path|directory) traversal\b/,
  /\bopen redirect\b/,
  /\bprivilege escalation\b/,
  /\b(?:authentication|authorization|authorisation|auth) (?:bypass|check is missing|is missing)\b/,
  /\bmissing (?:authentication|authorization|authorisation|auth check|access control|permission check)\b/,
  /\bvulnerab/,
  /\bcve-\d{4}-\d+\b/,
  /\bcwe-\d+\b/,
  /\b(?:hard-?coded|leak(?:ed|s|ing)?|exposed?|plain-?text|logged) (?:secrets?|credentials?|passwords?|api keys?|access tokens?|private keys?)\b/,
  /\b(?:secrets?|credentials?|passwords?|api keys?|access tokens?|private keys?) (?:is |are )?(?:leak|expos|logged|hard-?coded|committed|stored in plain)/,
  /\b(?:unsafe|insecure) deserializ/,
  /\binsecure\b/,
  /\bsecurity (?:issue|risk|hole|flaw|bug|problem|vulnerability|impact|concern|weakness)\b/,
  /\btiming attack\b/,
  /\bprototype pollution\b/,
  /\bclickjacking\b/,
  /\bxxe\b/,
  /\bweak (?:hash|hashing|cipher|crypto|cryptography|encryption|random|randomness)\b/,
  /\bredos\b/,
];

/** Negations that must not count: "no security impact", "not a security issue", "non-security". */
const NEGATED = /\b(?:no|not an?|without any|non)[ -]security[\w -]*/g;

const categoryWords = (category: string) =>
  category
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);

/** The phrases as one alternation: one pass over the text instead of one per phrase. */
const ANY_SECURITY_TEXT = new RegExp(SECURITY_TEXT.map((re) => `(?:${re.source})`).join('|'));

export function textNamesSecurity(text: string): boolean {
  const plain = text.toLowerCase().replace(NEGATED, ' ');
  return ANY_SECURITY_TEXT.test(plain);
}

export function classifySecurity(finding: {
  category: string | null;
  title: string;
  body: string;
}): SecurityClass {
  const words = categoryWords(finding.category ?? '');
  if (words.some((w) => SECURITY_CATEGORY_WORDS.has(w))) return true;
  if (textNamesSecurity(`${finding.title}\n${finding.body}`)) return true;
  if (words.length > 0 && OTHER_CATEGORIES.has(words.join('-'))) return false;
  return null;
}
