import { durabilitySuite } from './durability-suite.js';

durabilitySuite('pg');
