import { raiseAlertQuietly, type AlertDeps } from '../alerts/raise.js';
import { APP_CREDENTIALS_MISSING, reconcileRepositories } from './repo-sync.js';
import { z } from 'zod';
import { SPEC_PROVIDER_WORDS } from '../config/schemas.js';
import { REASONING_EFFORTS } from '../review/providers/repo-model.js';
import { PROVIDER_NAMES } from '../review/providers/types.js';
import { plainText } from '../http/text.js';
import {
  ADMIN,
  defineOperation,
  OperatorError,
  READ_OR_KEY,
  REPO_PATTERN,
  type ServiceContext,
} from './operation.js';
import { SPEC_EXECUTOR_WORDS, VALIDATION_PROVIDERS } from '../validation/decide.js';

const branchList = z.array(plainText(255).min(1)).max(100);

/**
 * `validation.provider`: NAMES.md's executor names only. The spec's placeholders get a message naming the
 * real executor (`executor_a` is `bubblewrap`, `executor_b` is `e2b`).
 */
const validationProvider = z.enum(VALIDATION_PROVIDERS, {
  error: (iss) => {
    const given = String(iss.input);
    const real = SPEC_EXECUTOR_WORDS[given];
    return `must be one of ${VALIDATION_PROVIDERS.join(', ')}${real ? ` ("${given}" is the spec's placeholder: use "${real}")` : ''}`;
  },
});

/** `model.provider`, `model.fallbackProvider`: the four providers of NAMES.md "Model providers". */
const modelProvider = z.enum(PROVIDER_NAMES, {
  error: (iss) => {
    const real = SPEC_PROVIDER_WORDS[String(iss.input)];
    const hint = real ? ` ("${String(iss.input)}" is the spec's placeholder: use "${real}")` : '';
    return `must be one of ${PROVIDER_NAMES.join(', ')}${hint}`;
  },
});

/** The repository configuration PATCH body (operator-api 2.8): unknown fields at any level are refused. */
export const repoConfigPatch = z
  .strictObject({
    enabled: z.boolean().optional(),
    branches: z.strictObject({ include: branchList.optional(), exclude: branchList.optional() }).optional(),
    validation: z
      .strictObject({
        provider: validationProvider.optional(),
        codeChangesOnly: z.boolean().optional(),
      })
      .optional(),
    model: z
      .strictObject({
        provider: modelProvider.optional(),
        model: plainText(200).min(1).optional(),
        fallbackProvider: modelProvider.optional(),
        fallbackModel: plainText(200).min(1).optional(),
        reasoningEffort: z
          .enum(REASONING_EFFORTS, { error: `must be one of ${REASONING_EFFORTS.join(', ')}` })
          .optional(),
      })
      .optional(),
    alerts: z
      .strictObject({ telegram: z.boolean().optional(), target: plainText(300).optional() })
      .optional(),
    reason: plainText(1000).optional(),
  })
  .refine((b) => Object.keys(b).some((k) => k !== 'reason'), {
    message: 'give at least one configuration field',
    path: ['enabled'],
  });

export const repoOperations = {
  list: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { repos: await ctx.store.repositories.list() };
    },
  }),

  /**
   * `PATCH /operator/api/repos/:encodedRepo` (operator-api 2.8), audited with the change. The body is
   * validated first; a well-formed name Verdict has not seen yet is then created with it (NAMES.md), and the
   * answer says so with `created: true`. A malformed name (not `owner/name`, or a name `.` or `..`) is a 400.
   */
  configure: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({
      repo: z
        .string()
        .regex(REPO_PATTERN, 'use one URL-encoded owner%2Fname segment')
        .refine((name) => !/\/\.{1,2}$/.test(name), 'a repository is not named . or ..'),
      body: repoConfigPatch,
    }),
    async run(ctx, { repo: fullName, body }) {
      const { reason, ...patch } = body;
      const { repo, created } = await ctx.store.repositories.configure(fullName, patch, {
        actor: ctx.principal.actor,
        reason: reason ?? null,
      });
      return { repo, created };
    },
  }),
};

/** The App-level GitHub calls repository sync needs (an App-authenticated and an installation Octokit). */
export type AppGitHub = {
  /** Every installation of the App (`GET /app/installations`, all pages). */
  installations(): Promise<Array<{ id: number; account: string | null; suspended: boolean }>>;
  /** The repositories one installation can reach (`GET /installation/repositories`, all pages). */
  repositories(installationId: number): Promise<string[]>;
};

/** Alerts recorded but sent nowhere (a caller that was given no delivery settings). */
const NO_ALERT_DELIVERY: AlertDeps['config'] = { alertUrl: null, telegramBotToken: null, telegramApiUrl: '' };

/**
 * Repository sync (the `sync-repositories` command the bridge runs): every repository of every installation
 * that is not suspended is recorded as installed with its installation; once every listing has succeeded,
 * an installed repository GitHub no longer lists is marked uninstalled. Without App credentials (`app`
 * null) it is refused with `app_credentials_missing`.
 */
export async function syncRepositories(
  ctx: ServiceContext,
  app: AppGitHub | null,
  alerts: AlertDeps['config'] = NO_ALERT_DELIVERY,
) {
  if (!app) {
    throw new OperatorError(503, APP_CREDENTIALS_MISSING.code, APP_CREDENTIALS_MISSING.message);
  }
  const { store } = ctx;
  const result = await reconcileRepositories(app, {
    installed: async () =>
      (await store.repositories.list()).filter((r) => r.installed).map((r) => r.fullName),
    // A repository the App is installed on is reviewed (NAMES.md "Installed means reviewed"), as if its
    // installation event had arrived: enabled unless an operator configuration exists already.
    upsertInstalled: async (fullName, installationId) => {
      await store.repositories.upsertInstalled(fullName, installationId, {
        actor: ctx.principal.actor,
        reason: 'repository sync: the App is installed on the repository',
      });
    },
    markUninstalled: (names) => store.repositories.markUninstalled(names),
    alert: (input) => raiseAlertQuietly({ store, log: ctx.log, config: alerts }, input),
  });
  ctx.log.info(
    { event: 'repositories-synced', installations: result.installations, repositories: result.repositories },
    `repository sync: ${result.repositories} repositories in ${result.installations} installations`,
  );
  return result;
}
