import { sqlQueue } from '../../src/queue/sql.js';
import { openTestStore } from '../helpers/store.js';
import { queueContractSuite } from './queue-contract-suite.js';

describe('queue contract: PostgreSQL job table', () =>
  queueContractSuite(async () => {
    const t = await openTestStore('pg');
    return { queue: sqlQueue(t.store), clock: t.clock, close: t.cleanup };
  }));
