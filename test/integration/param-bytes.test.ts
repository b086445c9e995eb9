import { paramBytesSuite } from './param-bytes-suite.js';

describe('NUL bytes and oversized numbers on SQLite', () => paramBytesSuite('sqlite'));
