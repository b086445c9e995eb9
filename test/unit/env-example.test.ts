import { readFileSync } from 'node:fs';
import { loadConfig, type ProcessEnv } from '../../src/config/index.js';
import { renderEnvExample, withConfigurationTables } from '../../src/config/docs.js';
import { VARIABLES, legacyName } from '../../src/config/env.js';
import type { Variable } from '../../src/config/schemas.js';

/**
 * `.env.example` and the tables of docs/configuration.md are generated from the configuration catalogue
 * (src/config/env.ts); after changing it, run `npx tsx scripts/config-docs.ts`.
 */
describe('the configuration catalogue and its documents', () => {
  test('.env.example is the one generated from the catalogue', () => {
    expect(readFileSync('.env.example', 'utf8')).toBe(renderEnvExample());
    const listed = [...renderEnvExample().matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    expect(listed).toEqual(Object.keys(VARIABLES));
  });

  test('the tables of docs/configuration.md are the ones generated from the catalogue', () => {
    const doc = readFileSync('docs/configuration.md', 'utf8');
    expect(doc).toBe(withConfigurationTables(doc));
    for (const name of Object.keys(VARIABLES)) expect(doc).toContain(`| \`${name}\` |`);
  });

  test('every default is a valid value of its variable, and every variable is documented', () => {
    for (const [name, variable] of Object.entries(VARIABLES) as Array<[string, Variable]>) {
      expect([name, variable.doc.trim().length > 0, variable.doc.includes('\n')]).toEqual([
        name,
        true,
        false,
      ]);
      if (variable.default !== undefined) {
        expect([name, variable.schema.safeParse(variable.default).success]).toEqual([name, true]);
      }
    }
  });

  test('the configuration reads only catalogue variables (and the legacy names of the VERDICT_ ones)', () => {
    const known = new Set(Object.keys(VARIABLES).flatMap((name) => [name, legacyName(name) ?? name]));
    // Besides them only the system's PATH, where the validation switch looks for the sandbox (bwrap).
    const system = new Set(['PATH']);
    const read = new Set<string>();
    const recording = (values: ProcessEnv) =>
      new Proxy(values, {
        get(target, key) {
          if (typeof key === 'string') read.add(key);
          return Reflect.get(target, key);
        },
      });
    loadConfig(recording({}));
    loadConfig(
      recording({ DATABASE_URL: 'postgres://u@localhost:5432/db', VERDICT_RUNNER_SHADOW_MODEL: 'm' }),
    );
    expect([...read].filter((name) => !known.has(name) && !system.has(name))).toEqual([]);
    expect([...known].filter((name) => !read.has(name))).toEqual([]);
  });
});
