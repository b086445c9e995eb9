import { retriesToDeadSuite } from './queue-repair-suite.js';

describe('retries, dead letter and queue repair on PostgreSQL', () => retriesToDeadSuite('pg'));
