import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Router } from '../../src/http/router.js';
import { HttpQueue } from '../../src/queue/http-client.js';
import { registerQueueRoutes } from '../../src/queue/http-routes.js';
import { createHttpServer } from '../../src/server.js';
import { openTestStore } from '../helpers/store.js';
import { queueContractSuite } from './queue-contract-suite.js';

describe('queue contract: SQLite job table', () =>
  queueContractSuite(async () => {
    const t = await openTestStore('sqlite');
    return { queue: t.store.jobs, clock: t.clock, close: t.cleanup };
  }));

describe('queue contract: HTTP client over the queue routes', () =>
  queueContractSuite(async () => {
    const t = await openTestStore('sqlite');
    const router = new Router();
    const log = pino({ level: 'silent' });
    registerQueueRoutes(router, {
      queue: t.store.jobs,
      tokens: { queueWorker: 'w', queueAdmin: 'a', queueEnqueue: 'e' },
      defaultLeaseMs: 300_000,
      log,
    });
    const server = createHttpServer(router, [], log);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A worker machine has one token; the test routes each call to the class the route needs.
    const tokenFor = (path: string) =>
      path.startsWith('/queue/enqueue') ? 'e' : /^\/queue\/(jobs|stats)/.test(path) ? 'a' : 'w';
    const queue = new HttpQueue({
      url,
      token: 'unused',
      fetch: (input, init) => {
        const path = new URL(String(input)).pathname;
        return fetch(input, {
          ...init,
          headers: {
            ...(init?.headers as Record<string, string>),
            authorization: `Bearer ${tokenFor(path)}`,
          },
        });
      },
    });
    return {
      queue,
      clock: t.clock,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
        await t.cleanup();
      },
    };
  }));
