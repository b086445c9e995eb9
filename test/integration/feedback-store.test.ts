import { feedbackStoreSuite } from './feedback-store-suite.js';

describe('feedback store on SQLite', () => feedbackStoreSuite('sqlite'));
