import { authorizeCommand } from '../../src/commands/authorize.js';
import { DEFAULT_REPO_CONFIG, resolveRepoConfig } from '../../src/commands/repo-config.js';

const manual = DEFAULT_REPO_CONFIG.manual;

describe('command authorization', () => {
  test.each(['OWNER', 'MEMBER', 'COLLABORATOR', 'member'])(
    'association %s is allowed by default',
    (association) => {
      expect(authorizeCommand({ login: 'a', association }, manual)).toEqual({ allowed: true });
    },
  );

  test.each(['CONTRIBUTOR', 'NONE', 'FIRST_TIME_CONTRIBUTOR', null])(
    'association %s is unauthorized_commenter',
    (association) => {
      expect(authorizeCommand({ login: 'a', association }, manual)).toEqual({
        allowed: false,
        reason: 'unauthorized_commenter',
      });
    },
  );

  test('a listed login passes regardless of association (case-insensitive)', () => {
    const m = { ...manual, allowUsers: ['Helper'] };
    expect(authorizeCommand({ login: 'helper', association: 'NONE' }, m)).toEqual({ allowed: true });
    expect(authorizeCommand({ login: 'other', association: 'NONE' }, m).allowed).toBe(false);
  });

  test('manual.enabled false is manual_disabled, even for owners', () => {
    const m = { ...manual, enabled: false };
    expect(authorizeCommand({ login: 'a', association: 'OWNER' }, m)).toEqual({
      allowed: false,
      reason: 'manual_disabled',
    });
  });

  test('allowAssociations from a config file is upper-cased', () => {
    const { config } = resolveRepoConfig({ manual: { allowAssociations: ['contributor'] } });
    expect(authorizeCommand({ login: 'a', association: 'CONTRIBUTOR' }, config.manual)).toEqual({
      allowed: true,
    });
    expect(authorizeCommand({ login: 'a', association: 'OWNER' }, config.manual).allowed).toBe(false);
  });
});
