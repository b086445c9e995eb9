import { openTestStore } from '../helpers/store.js';
import { queueContractSuite } from './queue-contract-suite.js';

describe('queue contract: PostgreSQL job table', () =>
  queueContractSuite(async () => {
    const t = await openTestStore('pg');
    return { queue: t.store.jobs, clock: t.clock, close: t.cleanup };
  }));
