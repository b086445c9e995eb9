import { storeSuite } from './store-suite.js';

describe('store on SQLite', () => storeSuite('sqlite'));
