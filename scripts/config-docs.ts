/**
 * Writes `.env.example` and the variable tables of docs/configuration.md from the configuration catalogue
 * (src/config/env.ts). Run after changing the catalogue: `npx tsx scripts/config-docs.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderEnvExample, withConfigurationTables } from '../src/config/docs.js';

writeFileSync('.env.example', renderEnvExample());
writeFileSync(
  'docs/configuration.md',
  withConfigurationTables(readFileSync('docs/configuration.md', 'utf8')),
);
