import { storeSuite } from './store-suite.js';

describe('store on PostgreSQL', () => storeSuite('pg'));
