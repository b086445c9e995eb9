import { Probot } from 'probot';
import nock from 'nock';

test('probot and nock load under ESM jest', () => {
  expect(typeof Probot).toBe('function');
  expect(typeof nock.disableNetConnect).toBe('function');
});
