import type { RepoConfig } from './repo-config.js';

export type CommandAuthorization =
  { allowed: true } | { allowed: false; reason: 'manual_disabled' | 'unauthorized_commenter' };

/**
 * Manual commands off → `manual_disabled`; else the author's association must be in
 * `manual.allowAssociations` or the login in `manual.allowUsers` (both case-insensitive).
 */
export function authorizeCommand(
  input: { login: string; association: string | null | undefined },
  manual: RepoConfig['manual'],
): CommandAuthorization {
  if (!manual.enabled) return { allowed: false, reason: 'manual_disabled' };
  const association = (input.association ?? '').toUpperCase();
  if (association && manual.allowAssociations.some((a) => a.toUpperCase() === association))
    return { allowed: true };
  const login = input.login.toLowerCase();
  if (manual.allowUsers.some((u) => u.toLowerCase() === login)) return { allowed: true };
  return { allowed: false, reason: 'unauthorized_commenter' };
}
