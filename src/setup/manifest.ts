import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/** The App manifest of the repository (the file GitHub's manifest flow registers the App from). */
export const APP_YML_PATH = fileURLToPath(new URL('../../app.yml', import.meta.url));

/** The fields of app.yml that Verdict sends; GitHub's manifest format (docs/setup.md). */
const appYml = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  url: z.string().min(1),
  public: z.boolean().default(false),
  default_events: z.array(z.string()).default([]),
  default_permissions: z.record(z.string(), z.string()).default({}),
});
export type AppYml = z.infer<typeof appYml>;

export function readAppYml(path: string = APP_YML_PATH): AppYml {
  const parsed = appYml.safeParse(parseYaml(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path}: ${issue?.path.join('.') || 'the document'} ${issue?.message ?? 'is invalid'}`);
  }
  return parsed.data;
}

/** The routes of this server the manifest points GitHub at. */
export const SETUP_CALLBACK_PATH = '/setup/callback';
export const WEBHOOK_PATH = '/github/webhooks';
export const OAUTH_CALLBACK_PATH = '/operator/auth/github/callback';

/**
 * The manifest (the JSON GitHub's "new App" form takes as its `manifest` field) for a server reached at
 * `publicUrl` (no trailing slash): webhooks to its webhook route, or to `webhookProxyUrl` (a smee channel
 * that `npm start` forwards) when one is configured; GitHub sends the browser back to the setup callback;
 * the dashboard's "Sign in with GitHub" returns to its OAuth callback.
 */
export function buildManifest(app: AppYml, publicUrl: string, webhookProxyUrl: string | null = null) {
  return {
    name: app.name,
    url: app.url,
    ...(app.description ? { description: app.description } : {}),
    hook_attributes: { url: webhookProxyUrl ?? `${publicUrl}${WEBHOOK_PATH}`, active: true },
    redirect_url: `${publicUrl}${SETUP_CALLBACK_PATH}`,
    callback_urls: [`${publicUrl}${OAUTH_CALLBACK_PATH}`],
    public: app.public,
    default_permissions: app.default_permissions,
    default_events: app.default_events,
  };
}

/** Where the form posts: the user's "new App" page, or the organisation's. */
export function newAppUrl(webUrl: string, org: string | null, state: string): string {
  const path = org ? `/organizations/${encodeURIComponent(org)}/settings/apps/new` : '/settings/apps/new';
  return `${webUrl}${path}?state=${encodeURIComponent(state)}`;
}
