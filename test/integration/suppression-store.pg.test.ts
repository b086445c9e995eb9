import { suppressionStoreSuite } from './suppression-store-suite.js';

describe('suppression store on PostgreSQL', () => suppressionStoreSuite('pg'));
