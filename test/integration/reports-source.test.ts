import { reportSourceSuite } from './reports-source-suite.js';

describe('report source on SQLite', () => reportSourceSuite('sqlite'));
