import { z } from 'zod';
import type { Variable } from './schemas.js';
import {
  budget,
  dashboard,
  evidence,
  github,
  http,
  ingress,
  providers,
  publication,
  queue,
  scheduler,
  server,
  setup,
  store,
  tokens,
  validation,
  worker,
} from './sections.js';

/**
 * The environment Verdict reads, as data: one entry per variable with its one-line documentation, its zod
 * schema and its default. `loadConfig` (index.ts) builds the typed config from the parsed values;
 * `.env.example` and the table of docs/configuration.md are generated from this catalogue (docs.ts).
 *
 * Prefix rule: a variable named `VERDICT_<name>` also answers to the legacy `REVIEWBOT_<name>`, with a
 * nullish fallback (`VERDICT_<name>` when it is set at all, even empty, else `REVIEWBOT_<name>`). Every
 * other variable is read under its own name only. An unset or blank value means the default.
 */

export const CANONICAL_PREFIX = 'VERDICT_';
export const LEGACY_PREFIX = 'REVIEWBOT_';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}
/** The catalogue in the order of `.env.example`, by section. */
export const SECTIONS = [
  { title: 'Server', variables: server },
  { title: "GitHub App (Probot's variables)", variables: github },
  { title: 'Store', variables: store },
  { title: 'Ingress', variables: ingress },
  { title: 'Product and publication', variables: publication },
  { title: 'Worker', variables: worker },
  { title: 'Validation', variables: validation },
  { title: 'Evidence artifacts (docs/evidence.md)', variables: evidence },
  { title: 'Review engine: model providers', variables: providers },
  { title: 'Review engine: context budget', variables: budget },
  { title: 'Queue selection (for worker processes)', variables: queue },
  { title: 'Service tokens (Authorization: Bearer <token>; unset: nobody gets in)', variables: tokens },
  { title: 'Public address and HTTP limits', variables: http },
  { title: 'Scheduled jobs and the command bridge', variables: scheduler },
  { title: 'Operator dashboard', variables: dashboard },
  { title: 'First-run setup (registering the GitHub App from app.yml)', variables: setup },
] as const;

export const VARIABLES = {
  ...server,
  ...github,
  ...store,
  ...ingress,
  ...publication,
  ...worker,
  ...validation,
  ...evidence,
  ...providers,
  ...budget,
  ...queue,
  ...tokens,
  ...http,
  ...scheduler,
  ...dashboard,
  ...setup,
};

export type VariableName = keyof typeof VARIABLES;
type LegacyName<N> = N extends `VERDICT_${infer Rest}` ? `REVIEWBOT_${Rest}` : never;

/**
 * The environment Verdict reads (Probot's style): every documented variable (see the catalogue for each
 * one's documentation) and the legacy spelling of each `VERDICT_` one. Other variables may be present.
 */
export type ProcessEnv = { [K in VariableName]?: string } & {
  [K in VariableName as LegacyName<K>]?: string;
} & { [name: string]: string | undefined };

type Parsed<E> =
  E extends Variable<infer S, infer D> ? z.output<S> | (D extends string ? never : undefined) : never;

/** The parsed value of every variable: `undefined` only for an unset variable without a default. */
export type Settings = { readonly [K in VariableName]: Parsed<(typeof VARIABLES)[K]> };

/** The legacy spelling of a `VERDICT_` variable (`REVIEWBOT_…`), or null for a variable without one. */
export function legacyName(name: string): string | null {
  return name.startsWith(CANONICAL_PREFIX) ? LEGACY_PREFIX + name.slice(CANONICAL_PREFIX.length) : null;
}

/**
 * The raw value of a variable with the nullish prefix fallback, and the variable that supplied it (the
 * one a user should fix): `VERDICT_<name>` when it is set at all, even empty, else `REVIEWBOT_<name>`.
 */
export function lookup(env: ProcessEnv, name: VariableName): { variable: string; raw: string | undefined } {
  const legacy = legacyName(name);
  if (legacy !== null && env[name] === undefined && env[legacy] !== undefined) {
    return { variable: legacy, raw: env[legacy] };
  }
  return { variable: name, raw: env[name] };
}

/**
 * Every variable of the catalogue, parsed: an unset or blank value takes the default; the first invalid
 * value throws a ConfigError naming the variable that supplied it.
 */
export function parseEnv(env: ProcessEnv): Settings {
  const settings: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(VARIABLES) as Array<[VariableName, Variable]>) {
    const { variable, raw } = lookup(env, name);
    const value = raw === undefined || raw.trim() === '' ? entry.default : raw;
    if (value === undefined) continue;
    const parsed = entry.schema.safeParse(value);
    if (!parsed.success) throw new ConfigError(variable, parsed.error.issues[0]?.message ?? 'is invalid');
    settings[name] = parsed.data;
  }
  return settings as Settings;
}
