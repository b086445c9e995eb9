import { createServer } from 'node:http';
import nock from 'nock';
import { assertNoUnusedInterceptors } from '../helpers/network.js';

describe('the test setup: no network, no unused interceptor', () => {
  test('a request to another host fails without leaving the machine', async () => {
    const error = await fetch('https://api.github.com/zen').then(
      () => null,
      (e: unknown) => e as { name?: string; code?: string },
    );
    expect(error).toMatchObject({ name: 'NetConnectNotAllowedError', code: 'ENETUNREACH' });
  });

  test('a server on this machine answers', async () => {
    const server = createServer((_req, res) => res.end('local'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('local');
    } finally {
      server.close();
    }
  });

  test('an interceptor left unused is an error naming it, and is dropped', () => {
    nock('https://api.github.com').get('/repos/o/r').reply(200, {});
    expect(() => assertNoUnusedInterceptors()).toThrow(
      /unused:\n {2}GET https:\/\/api\.github\.com:443\/repos\/o\/r/,
    );
    expect(nock.pendingMocks()).toEqual([]);
    expect(() => assertNoUnusedInterceptors()).not.toThrow();
  });

  test('used interceptors pass', async () => {
    nock('https://api.github.com').get('/zen').reply(200, 'Keep it logically awesome.');
    expect(await (await fetch('https://api.github.com/zen')).text()).toBe('Keep it logically awesome.');
    expect(() => assertNoUnusedInterceptors()).not.toThrow();
  });
});
