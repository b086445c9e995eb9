import { alertStoreSuite } from './alerts-store-suite.js';

describe('alert store on SQLite', () => alertStoreSuite('sqlite'));
