import { readFileSync } from 'node:fs';
import { loadConfig, type Env } from '../../src/config.js';
import { selectProviders } from '../../src/review/providers/select.js';

/**
 * `.env.example` is the documented list of the environment Verdict reads: checked here against what the
 * configuration code actually reads, through an environment that records every variable asked for.
 */
const example = readFileSync('.env.example', 'utf8');
const documented = new Set([...example.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));

/** Variables of the system or of tools, not Verdict's settings. */
const SYSTEM = new Set(['USER', 'NO_COLOR', 'CODEX_HOME', 'HOME', 'PATH', 'NODE_ENV']);

/** Legacy spellings (`REVIEWBOT_*`) are read as fallbacks of the documented `VERDICT_*` names. */
const canonical = (name: string) => name.replace(/^REVIEWBOT_/, 'VERDICT_');

function recording(values: Env): { env: Env; read: Set<string> } {
  const read = new Set<string>();
  const env = new Proxy(values, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key);
    },
  });
  return { env, read };
}

const BASE: Env = { GITHUB_WEBHOOK_SECRET: 'secret', VERDICT_DB_PATH: ':memory:' };
const VARIANTS: Env[] = [
  {},
  // The fallback spelling of the webhook secret is read only without GITHUB_WEBHOOK_SECRET.
  { GITHUB_WEBHOOK_SECRET: undefined, WEBHOOK_SECRET: 'secret' },
  { DATABASE_URL: 'postgres://u@localhost:5432/db' },
  { VERDICT_RUNNER_PROVIDER: 'openai', OPENAI_API_KEY: 'k', VERDICT_RUNNER_MODEL: 'gpt-4o-mini' },
  { VERDICT_RUNNER_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'k', VERDICT_RUNNER_MODEL: 'claude-sonnet-4-5' },
  {
    VERDICT_RUNNER_PROVIDER: 'openrouter',
    OPENROUTER_API_KEY: 'k',
    VERDICT_RUNNER_MODEL: 'meta-llama/llama-3.3-70b-instruct:free',
    VERDICT_RUNNER_SHADOW_PROVIDER: 'openai',
    OPENAI_API_KEY: 'k',
    VERDICT_RUNNER_SHADOW_MODEL: 'gpt-4o-mini',
  },
  { VERDICT_RUNNER_PROVIDER: 'codex', VERDICT_RUNNER_MODEL: 'gpt-5-codex' },
];

function readsOf(values: Env): Set<string> {
  const { env, read } = recording({ ...BASE, ...values });
  loadConfig(env);
  try {
    selectProviders(env);
  } catch {
    // A provider that cannot be built here (no key) has still read its variables.
  }
  return read;
}

describe('.env.example documents the environment Verdict reads', () => {
  const read = new Set<string>();
  beforeAll(() => {
    for (const variant of VARIANTS) for (const name of readsOf(variant)) read.add(name);
  });

  test('every variable the configuration reads is in .env.example', () => {
    const undocumented = [...read]
      .map(canonical)
      .filter((name) => !documented.has(name) && !SYSTEM.has(name));
    expect([...new Set(undocumented)].sort()).toEqual([]);
  });

  test('every variable in .env.example is read by the configuration', () => {
    const canonicalRead = new Set([...read].map(canonical));
    expect([...documented].filter((name) => !canonicalRead.has(name)).sort()).toEqual([]);
  });
});
