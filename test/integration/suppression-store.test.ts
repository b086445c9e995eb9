import { suppressionStoreSuite } from './suppression-store-suite.js';

describe('suppression store on SQLite', () => suppressionStoreSuite('sqlite'));
