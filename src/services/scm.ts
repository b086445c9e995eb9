import { z } from 'zod';
import { ADMIN, defineOperation, notFound, OperatorError, READ_OR_KEY } from './operation.js';

export const revisionBody = z.strictObject({
  revision: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

/**
 * The SCM family (operator-api 4.6; NAMES.md "Never missing a pull request"): the installed repositories
 * as the store knows them and the alerts (open ones first, then the 50 most recently dismissed), an SCM
 * sync (a `sync-repositories` command the command bridge runs with `syncRepositories`), and the dismissal
 * of an alert at its revision (404 unknown, 409 `revision_conflict` when stale), audited.
 */
export const scmOperations = {
  view: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      const open = await ctx.store.alerts.list({ limit: 500 });
      const dismissed = (
        await ctx.store.alerts.list({ includeDismissed: true, limit: open.length + 50 })
      ).filter((a) => a.dismissedAt !== null);
      return { repositories: await ctx.store.repositories.list(), alerts: [...open, ...dismissed] };
    },
  }),

  /** Queues a `sync-repositories` command (REST answers 202). */
  sync: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({}),
    async run(ctx) {
      const { command } = await ctx.store.commands.create({
        id: ctx.newId('cmd'),
        kind: 'sync-repositories',
        payload: {},
        actor: ctx.principal.actor,
      });
      ctx.log.info(
        { event: 'command-created', commandId: command.id, kind: command.kind },
        'SCM sync queued',
      );
      return { created: true, command };
    },
  }),

  /** `DELETE /scm/alerts/:id` with `{revision}` → `{alert}` with `dismissedAt` set. */
  dismissAlert: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({ id: z.string(), body: revisionBody }),
    async run(ctx, { id, body }) {
      const result = await ctx.store.alerts.dismiss(id, body.revision, ctx.principal.actor);
      if (result.status === 'not_found') throw notFound('No such SCM alert');
      if (result.status === 'revision_conflict') {
        throw new OperatorError(
          409,
          'revision_conflict',
          `The alert has changed: it is at revision ${result.currentRevision}`,
          { revision: result.currentRevision },
        );
      }
      await ctx.store.audit.record({
        actor: ctx.principal.actor,
        action: 'scm.alert.dismiss',
        target: id,
        detail: { kind: result.alert.kind, repo: result.alert.repo, revision: result.alert.revision },
      });
      return { alert: result.alert };
    },
  }),
};
