import { paramBytesSuite } from './param-bytes-suite.js';

describe('NUL bytes and oversized numbers on PostgreSQL', () => paramBytesSuite('pg'));
