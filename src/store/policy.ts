import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { mergePolicy, sanitizeStoredPolicy } from '../policy/merge.js';
import type { ReviewPolicy } from '../policy/policy.schema.js';
import { parseJson, writeTransaction } from './db.js';

export const DEFAULT_WORKSPACE = 'default';

export type StoredPolicy = { revision: number; settings: ReviewPolicy; updatedAt: number; updatedBy: string };

export type PolicyWriteResult =
  | { ok: true; policy: StoredPolicy }
  | { ok: false; code: 'not_initialized' }
  | { ok: false; code: 'revision_conflict'; revision: number }
  | { ok: false; code: 'invalid'; path: string; message: string };

/** The workspace review policy document with optimistic concurrency on its revision. */
export class PolicyStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  /** The effective policy (stored fields merged over the defaults), or null when the row is absent. */
  async get(workspace = DEFAULT_WORKSPACE): Promise<StoredPolicy | null> {
    const row = await this.knex('review_policies').where({ workspace }).first();
    if (!row) return null;
    return {
      revision: Number(row.revision),
      settings: sanitizeStoredPolicy(parseJson(row.document, {})).policy,
      updatedAt: Number(row.updated_at),
      updatedBy: String(row.updated_by),
    };
  }

  /**
   * Merges `patch` over the saved document when `revision` is current, and writes the new document, its
   * revision (+1) and its audit entry in one transaction. The update is conditional on the revision, so
   * of two writers with the same revision exactly one wins.
   */
  async update(
    revision: number,
    patch: unknown,
    actor: string,
    workspace = DEFAULT_WORKSPACE,
  ): Promise<PolicyWriteResult> {
    return writeTransaction(this.knex, async (trx) => {
      const row = await trx('review_policies').where({ workspace }).first();
      if (!row) return { ok: false, code: 'not_initialized' };
      if (Number(row.revision) !== revision) {
        return { ok: false, code: 'revision_conflict', revision: Number(row.revision) };
      }
      const merged = mergePolicy(parseJson(row.document, {}), patch);
      if (!merged.ok) return { ok: false, code: 'invalid', path: merged.path, message: merged.message };
      const now = this.clock.now();
      const next = revision + 1;
      const n = await trx('review_policies')
        .where({ workspace, revision })
        .update({
          revision: next,
          document: JSON.stringify(merged.policy),
          updated_by: actor,
          updated_at: now,
        });
      if (n !== 1) return { ok: false, code: 'revision_conflict', revision: next };
      await trx('audit_events').insert({
        actor,
        action: 'settings.update',
        target: `policy:${workspace}`,
        reason: null,
        detail: JSON.stringify({ fromRevision: revision, toRevision: next, patch }),
        created_at: now,
      });
      return {
        ok: true,
        policy: { revision: next, settings: merged.policy, updatedAt: now, updatedBy: actor },
      };
    });
  }
}
