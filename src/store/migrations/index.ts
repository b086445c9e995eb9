import type { Knex } from 'knex';
import * as m001 from './001-initial.js';
import * as m002 from './002-queue-repair.js';
import * as m003 from './003-api-keys.js';
import * as m004 from './004-commands.js';
import * as m005 from './005-claim-index.js';
import * as m006 from './006-review-policy.js';
import * as m007 from './007-review-records.js';
import * as m008 from './008-read-indexes.js';
import * as m009 from './009-run-analysis.js';
import * as m010 from './010-publication.js';
import * as m012 from './012-competitor-reviews.js';
import * as m013 from './013-scheduler.js';
import * as m014 from './014-compressed-payloads.js';
import * as m015 from './015-lz4-payloads.js';
import * as m016 from './016-lean-delivery-writes.js';
import * as m017 from './017-line-comments.js';
import * as m018 from './018-testlab-runs.js';
import * as m019 from './019-ui-sessions.js';
import * as m020 from './020-executor-costs.js';
import * as m021 from './021-installed-enabled.js';
import * as m022 from './022-memory.js';
import * as m023 from './023-alerts.js';
import * as m024 from './024-feedback.js';
import * as m025 from './025-finding-status.js';
import * as m027 from './027-memory-withheld.js';
import * as m028 from './028-publication-steps.js';

type Migration = { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> };

/** Migrations are imported statically so they work the same under tsx, ts-jest and a bundler. */
const migrations: Array<[string, Migration]> = [
  ['001-initial', m001],
  ['002-queue-repair', m002],
  ['003-api-keys', m003],
  ['004-commands', m004],
  ['005-claim-index', m005],
  ['006-review-policy', m006],
  ['007-review-records', m007],
  ['008-read-indexes', m008],
  ['009-run-analysis', m009],
  ['010-publication', m010],
  ['012-competitor-reviews', m012],
  ['013-scheduler', m013],
  ['014-compressed-payloads', m014],
  ['015-lz4-payloads', m015],
  ['016-lean-delivery-writes', m016],
  ['017-line-comments', m017],
  ['018-testlab-runs', m018],
  ['019-ui-sessions', m019],
  ['020-executor-costs', m020],
  ['021-installed-enabled', m021],
  ['022-memory', m022],
  ['023-alerts', m023],
  ['024-feedback', m024],
  ['025-finding-status', m025],
  ['027-memory-withheld', m027],
  ['028-publication-steps', m028],
];

export const migrationSource: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => migrations,
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};

export const migrationNames = migrations.map(([name]) => name);
