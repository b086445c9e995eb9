import { queueFailureSuite } from './queue-failures-suite.js';

describe('queue failures on SQLite (worker processes)', () => queueFailureSuite('sqlite', { raceJobs: 300 }));
