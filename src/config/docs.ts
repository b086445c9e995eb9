import { SECTIONS } from './env.js';
import { flag, type Variable } from './schemas.js';

/**
 * `.env.example` and the variable tables of docs/configuration.md, rendered from the catalogue of env.ts.
 * `npx tsx scripts/config-docs.ts` writes both; test/unit/env-example.test.ts checks they are current.
 */

const GENERATOR = 'npx tsx scripts/config-docs.ts';

function entries(variables: object): Array<[string, Variable]> {
  return Object.entries(variables) as Array<[string, Variable]>;
}

export function renderEnvExample(): string {
  const lines = [
    '# Copy to .env and fill in. Every VERDICT_ variable also accepts the legacy REVIEWBOT_ prefix',
    '# (nullish fallback: an empty VERDICT_X does not fall through to REVIEWBOT_X); unset or blank is the default.',
    `# Generated from src/config/env.ts by \`${GENERATOR}\`: change the catalogue, not this file.`,
  ];
  for (const { title, variables } of SECTIONS) {
    lines.push('', `# --- ${title} ${'-'.repeat(Math.max(3, 100 - title.length - 7))}`);
    for (const [name, variable] of entries(variables)) {
      lines.push(`# ${variable.doc}`, `${name}=${variable.default ?? ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export const DOCS_BEGIN = `<!-- Generated from src/config/env.ts by \`${GENERATOR}\`: change the catalogue, not this part. -->`;
export const DOCS_END = '<!-- End of the generated part. -->';

/** Text for a Markdown table cell: pipes escaped, `<name>` kept from being read as HTML. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;');
}

/** The generated part of docs/configuration.md: the flags, then one table per section. */
export function renderConfigurationTables(): string {
  const flags = SECTIONS.flatMap(({ variables }) =>
    entries(variables).filter(([, variable]) => variable.schema === flag),
  );
  const lines = [
    DOCS_BEGIN,
    '',
    'The one boolean rule: a flag takes `1` or `true` for on and `0` or `false` for off, in any case; blank is its',
    'default, and any other value stops start-up naming the variable. The flags are',
    `${flags.map(([name]) => `\`${name}\``).join(', ')}. \`VERDICT_OPENROUTER_REQUIRE_FREE\` is not one: it fails`,
    'closed, and only exactly `0` turns the free-only guard off.',
  ];
  for (const { title, variables } of SECTIONS) {
    lines.push(
      '',
      `### ${cell(title)}`,
      '',
      '| Variable | Default | Values | Meaning |',
      '|---|---|---|---|',
    );
    for (const [name, variable] of entries(variables)) {
      const fallback = variable.default === undefined ? '' : `\`${variable.default}\``;
      lines.push(
        `| \`${name}\` | ${fallback} | ${cell(variable.schema.description ?? 'text')} | ${cell(variable.doc)} |`,
      );
    }
  }
  lines.push('', DOCS_END);
  return lines.join('\n');
}

/** `doc` with its generated part (between DOCS_BEGIN and DOCS_END) replaced by the current one. */
export function withConfigurationTables(doc: string): string {
  const begin = doc.indexOf(DOCS_BEGIN);
  const end = doc.indexOf(DOCS_END);
  if (begin < 0 || end < begin) throw new Error('docs/configuration.md has no generated part to replace');
  return doc.slice(0, begin) + renderConfigurationTables() + doc.slice(end + DOCS_END.length);
}
