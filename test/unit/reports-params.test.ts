import { ReportError } from '../../src/reports/errors.js';
import { parseReportParams, queryToInput, reportParams } from '../../src/reports/params.js';

/** Report parameters (operator-api 4.2, NAMES.md): defaults, each rule, and the error naming the parameter. */
describe('report parameters', () => {
  const refusal = (input: unknown): { status: number; code: string; message: string } => {
    try {
      parseReportParams(input);
    } catch (error) {
      expect(error).toBeInstanceOf(ReportError);
      const e = error as ReportError;
      return { status: e.status, code: e.code, message: e.message };
    }
    throw new Error(`expected ${JSON.stringify(input)} to be refused`);
  };

  test('defaults: day, security all, page 1, pageSize 25, everything else null', () => {
    expect(parseReportParams({})).toEqual({
      repo: null,
      author: null,
      team: null,
      q: null,
      from: null,
      to: null,
      granularity: 'day',
      severity: null,
      status: null,
      security: 'all',
      page: 1,
      pageSize: 25,
    });
  });

  test('values as a query string gives them, and as numbers (tRPC)', () => {
    expect(
      parseReportParams({
        repo: 'acme/api',
        author: ' mona ',
        team: 'core',
        q: 'cache',
        from: '2024-02-29',
        to: '2024-03-01',
        granularity: 'month',
        severity: 'P0',
        status: 'not_reobserved',
        security: 'unknown',
        page: '100000',
        pageSize: '100',
      }),
    ).toMatchObject({ author: 'mona', page: 100000, pageSize: 100, from: '2024-02-29', severity: 'P0' });
    expect(parseReportParams({ page: 2, pageSize: 1 })).toMatchObject({ page: 2, pageSize: 1 });
    expect(parseReportParams({ from: '2026-03-01', to: '2026-03-01' })).toMatchObject({ from: '2026-03-01' });
    // Empty text is "not given".
    expect(parseReportParams({ q: '', author: '   ' })).toMatchObject({ q: null, author: null });
  });

  test.each([
    [{ foo: '1' }, 'foo'],
    [{ repo: 'acme' }, 'repo'],
    [{ repo: `a/${'b'.repeat(299)}` }, 'repo'],
    [{ author: 'x'.repeat(301) }, 'author'],
    [{ team: 'x'.repeat(301) }, 'team'],
    [{ q: 'x'.repeat(301) }, 'q'],
    [{ q: 'tab\there' }, 'q'],
    [{ from: '2025-02-29' }, 'from'],
    [{ from: '2026-02-01T00:00:00Z' }, 'from'],
    [{ to: '26-03-01' }, 'to'],
    [{ from: '2026-03-02', to: '2026-03-01' }, 'from'],
    [{ granularity: 'quarter' }, 'granularity'],
    [{ severity: 'high' }, 'severity'],
    [{ status: 'closed' }, 'status'],
    [{ security: 'maybe' }, 'security'],
    [{ page: '0' }, 'page'],
    [{ page: '100001' }, 'page'],
    [{ page: 1.5 }, 'page'],
    [{ page: '-1' }, 'page'],
    [{ pageSize: '0' }, 'pageSize'],
    [{ pageSize: 101 }, 'pageSize'],
    [{ pageSize: '1e2' }, 'pageSize'],
  ])('%j is refused, naming %s', (input, name) => {
    const e = refusal(input);
    expect(e).toMatchObject({ status: 400, code: 'invalid_parameter' });
    expect(e.message).toContain(`parameter ${name}`);
  });

  test('a parameter given twice is refused by name; unknown ones are left to the schema', () => {
    expect(queryToInput(new URLSearchParams('repo=a/b&q=x'))).toEqual({ repo: 'a/b', q: 'x' });
    expect(() => queryToInput(new URLSearchParams('q=x&q=y'))).toThrow(/parameter q: given more than once/);
    expect(() => queryToInput(new URLSearchParams('page=1&page=1'))).toThrow(ReportError);
    expect(queryToInput(new URLSearchParams('bogus=1'))).toEqual({ bogus: '1' });
    expect(reportParams.safeParse({ bogus: '1' }).success).toBe(false);
  });
});
