import { authorizeCommand } from '../../src/comment-commands/authorize.js';
import { DEFAULT_REPO_CONFIG, resolveRepoConfig, type RepoConfig } from '../../src/repo-config/schema.js';

const manual = DEFAULT_REPO_CONFIG.manual;
const ALLOWED = { allowed: true };
const UNAUTHORIZED = { allowed: false, reason: 'unauthorized_commenter' };
const DISABLED = { allowed: false, reason: 'manual_disabled' };

describe('command authorization with the default manual config', () => {
  test.each(['OWNER', 'MEMBER', 'COLLABORATOR', 'member', 'Collaborator', ' OWNER '])(
    'association %j is allowed',
    (association) => {
      expect(authorizeCommand({ login: 'a', association }, manual)).toEqual(ALLOWED);
    },
  );

  test.each([
    'CONTRIBUTOR',
    'FIRST_TIME_CONTRIBUTOR',
    'FIRST_TIMER',
    'MANNEQUIN',
    'NONE',
    '',
    null,
    undefined,
  ])('association %j is unauthorized_commenter', (association) => {
    expect(authorizeCommand({ login: 'a', association }, manual)).toEqual(UNAUTHORIZED);
  });
});

describe('manual.allowUsers', () => {
  const m: RepoConfig['manual'] = { ...manual, allowUsers: ['Helper', 'dependabot[bot]'] };

  test.each<[string, string | null | undefined]>([
    ['helper', 'NONE'],
    ['HELPER', 'CONTRIBUTOR'],
    ['Helper', null],
    ['helper', undefined],
    ['Dependabot[bot]', 'NONE'],
  ])('login %j passes regardless of association %j', (login, association) => {
    expect(authorizeCommand({ login, association }, m)).toEqual(ALLOWED);
  });

  test.each(['other', 'helper2', 'elper', ''])('login %j not in the list is unauthorized', (login) => {
    expect(authorizeCommand({ login, association: 'NONE' }, m)).toEqual(UNAUTHORIZED);
  });

  test('a listed login still passes when no association is allowed at all', () => {
    const onlyUsers: RepoConfig['manual'] = { enabled: true, allowAssociations: [], allowUsers: ['helper'] };
    expect(authorizeCommand({ login: 'helper', association: 'NONE' }, onlyUsers)).toEqual(ALLOWED);
    expect(authorizeCommand({ login: 'owner', association: 'OWNER' }, onlyUsers)).toEqual(UNAUTHORIZED);
  });

  test('an @ written before a login in the list is ignored', () => {
    const { config, error } = resolveRepoConfig({ manual: { allowUsers: ['@Helper'] } });
    expect(error).toBeNull();
    expect(authorizeCommand({ login: 'helper', association: 'NONE' }, config.manual)).toEqual(ALLOWED);
  });
});

describe('manual.enabled false', () => {
  const off: RepoConfig['manual'] = { ...manual, enabled: false, allowUsers: ['helper'] };

  test.each<[string, string | null]>([
    ['a', 'OWNER'],
    ['a', 'MEMBER'],
    ['helper', 'NONE'],
    ['a', null],
  ])('%j (%j) gets manual_disabled, checked before anything else', (login, association) => {
    expect(authorizeCommand({ login, association }, off)).toEqual(DISABLED);
  });
});

describe('manual.allowAssociations from a config file', () => {
  test('values are upper-cased, so lower-case YAML works', () => {
    const { config, error } = resolveRepoConfig({ manual: { allowAssociations: ['contributor'] } });
    expect(error).toBeNull();
    expect(authorizeCommand({ login: 'a', association: 'CONTRIBUTOR' }, config.manual)).toEqual(ALLOWED);
  });

  test('the list replaces the defaults rather than adding to them', () => {
    const { config } = resolveRepoConfig({ manual: { allowAssociations: ['contributor'] } });
    expect(authorizeCommand({ login: 'a', association: 'OWNER' }, config.manual)).toEqual(UNAUTHORIZED);
  });

  test('an empty list with no users lets nobody in', () => {
    const { config } = resolveRepoConfig({ manual: { allowAssociations: [] } });
    expect(authorizeCommand({ login: 'a', association: 'OWNER' }, config.manual)).toEqual(UNAUTHORIZED);
  });

  test('manual.enabled: false from a file disables commands', () => {
    const { config } = resolveRepoConfig({ manual: { enabled: false } });
    expect(authorizeCommand({ login: 'a', association: 'OWNER' }, config.manual)).toEqual(DISABLED);
  });
});
