import { z } from 'zod';
import { ADMIN, defineOperation, notFound, READ_OR_KEY } from './operation.js';

export const revisionBody = z.strictObject({
  revision: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

/**
 * The SCM family (operator-api 4.6): the view of the installed repositories as the store knows them
 * (alerts do not exist yet), an SCM sync (a `sync-repositories` command the command bridge runs with
 * `syncRepositories`), and the dismissal of an alert (none exists, so 404 once the body is valid).
 */
export const scmOperations = {
  view: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { repositories: await ctx.store.repositories.list(), alerts: [] as never[] };
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

  /** `DELETE /scm/alerts/:id` with `{revision}`: no alert is recorded by this version. */
  dismissAlert: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({ id: z.string(), body: revisionBody }),
    async run(): Promise<never> {
      throw notFound('No such SCM alert');
    },
  }),
};
