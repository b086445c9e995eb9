import { memoryStoreSuite } from './memory-store-suite.js';

describe('memory store on PostgreSQL', () => memoryStoreSuite('pg'));
