import { queueFailureSuite } from './queue-failures-suite.js';

describe('queue failures on PostgreSQL (worker processes)', () =>
  queueFailureSuite('pg', { raceJobs: 1000 }));
