import type { RepoConfig } from '../repo-config/schema.js';

export type CommandAuthorization =
  { allowed: true } | { allowed: false; reason: 'manual_disabled' | 'unauthorized_commenter' };

/**
 * Who may run a comment command (review-engine 4.7, admission reasons of 7.2):
 *
 * 1. `manual.enabled: false` → `manual_disabled`, checked first (even for the repository owner).
 * 2. The comment's `author_association` (GitHub sends OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...)
 *    is in `manual.allowAssociations` → allowed. Compared case-insensitively; a missing association matches
 *    nothing.
 * 3. The author's login is in `manual.allowUsers` → allowed regardless of association. Compared
 *    case-insensitively (GitHub logins are), a leading `@` in the list is ignored.
 * 4. Otherwise `unauthorized_commenter`.
 *
 * This does not check repository disablement, paused authors or budget: those are separate admission steps.
 */
export function authorizeCommand(
  input: { login: string; association: string | null | undefined },
  manual: RepoConfig['manual'],
): CommandAuthorization {
  if (!manual.enabled) return { allowed: false, reason: 'manual_disabled' };
  const association = (input.association ?? '').trim().toUpperCase();
  if (association.length > 0 && manual.allowAssociations.some((a) => a.trim().toUpperCase() === association))
    return { allowed: true };
  const login = input.login.trim().toLowerCase();
  if (login.length > 0 && manual.allowUsers.some((u) => u.trim().replace(/^@/, '').toLowerCase() === login))
    return { allowed: true };
  return { allowed: false, reason: 'unauthorized_commenter' };
}
