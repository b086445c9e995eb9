import { classifySecurity, textNamesSecurity } from '../../src/reports/security.js';
import { reportSeverity } from '../../src/reports/severity.js';

describe('report severity map', () => {
  test.each([
    ['blocker', 'P0'],
    ['critical', 'P0'],
    ['P0', 'P0'],
    ['high', 'P1'],
    [' High ', 'P1'],
    ['medium', 'P2'],
    ['low', 'P3'],
    ['p3', 'P3'],
    ['info', 'info'],
    ['informational', 'info'],
    ['nit', 'unknown'],
    ['', 'unknown'],
    [null, 'unknown'],
  ])('%p is %s', (stored, level) => {
    expect(reportSeverity(stored)).toBe(level);
  });
});

describe('security classifier', () => {
  const f = (category: string, title = 'Something', body = 'Details.') =>
    classifySecurity({ category, title, body });

  test('true from a security category, whatever the text', () => {
    for (const category of [
      'security',
      'Security',
      'auth',
      'authz',
      'sql-injection',
      'XSS',
      'secrets',
      'crypto',
    ]) {
      expect([category, f(category)]).toEqual([category, true]);
    }
  });

  test('true from text naming a security problem, even under another category', () => {
    expect(f('correctness', 'SQL injection in the search query')).toBe(true);
    expect(f('bug', 'Path traversal', 'A user can read ../../etc/passwd')).toBe(true);
    expect(f('', 'Token handling', 'The API key is logged on every request')).toBe(true);
    expect(f('general', 'Fix', 'This is CVE-2024-12345')).toBe(true);
    expect(f('performance', 'Hard-coded password in the client')).toBe(true);
    expect(textNamesSecurity('server-side request forgery via the webhook URL')).toBe(true);
  });

  test('false for a known non-security category without security text', () => {
    for (const category of [
      'correctness',
      'performance',
      'style',
      'tests',
      'Error handling',
      'type-safety',
    ]) {
      expect([category, f(category)]).toEqual([category, false]);
    }
    // Negations and look-alikes do not count.
    expect(f('style', 'Naming', 'No security impact, just naming.')).toBe(false);
    expect(f('maintainability', 'Use dependency injection for the clock')).toBe(false);
    expect(f('performance', 'Tokenizer is slow')).toBe(false);
  });

  test('null (unknown) when the category is empty or unfamiliar and the text says nothing', () => {
    expect(f('')).toBeNull();
    expect(f('general')).toBeNull();
    expect(f('misc', 'Refactor the loop')).toBeNull();
  });
});
