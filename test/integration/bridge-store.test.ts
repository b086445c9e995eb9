import { bridgeSuite } from './bridge-suite.js';

describe('command claims, the bridge race and scheduler records on SQLite', () => bridgeSuite('sqlite'));
