import { csvCell, csvRow, csvTable } from '../../src/reports/csv.js';
import {
  bucketLabel,
  bucketStart,
  isoWeekLabel,
  nextBucket,
  startOfIsoWeek,
} from '../../src/reports/calendar.js';

describe('CSV (RFC 4180, formula protection)', () => {
  test('plain cells, empty for null, numbers and booleans as they are', () => {
    expect(csvCell('abc')).toBe('abc');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(12)).toBe('12');
    expect(csvCell(true)).toBe('true');
  });

  test('quoting: comma, quote, CR, LF; quotes doubled', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    expect(csvCell('cr\rhere')).toBe('"cr\rhere"');
  });

  test('a cell starting with = + - @ tab or CR is prefixed with a quote', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+cmd')).toBe("'+cmd");
    expect(csvCell('-2')).toBe("'-2");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell('\rx')).toBe('"\'\rx"');
    expect(csvCell(`=HYPERLINK("http://x","y")`)).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvCell('a=b')).toBe('a=b');
  });

  test('rows end with CRLF; a table has its header row first', () => {
    expect(csvRow(['a', 1, null])).toBe('a,1,\r\n');
    const table = csvTable<{ n: number; s: string }>(
      [
        ['n', (r) => r.n],
        ['s', (r) => r.s],
      ],
      [{ n: 1, s: 'x,y' }],
    );
    expect(table.toString('utf8')).toBe('n,s\r\n1,"x,y"\r\n');
  });
});

describe('UTC calendar of the series', () => {
  const ms = (day: string) => Date.parse(`${day}T00:00:00Z`);
  test('ISO weeks start on Monday; the week-year is that of the Thursday', () => {
    expect(startOfIsoWeek(ms('2026-03-01'))).toBe(ms('2026-02-23')); // a Sunday
    expect(startOfIsoWeek(ms('2026-03-02') + 5)).toBe(ms('2026-03-02')); // a Monday
    expect(isoWeekLabel(ms('2026-02-23'))).toBe('2026-W09');
    expect(isoWeekLabel(ms('2026-03-02'))).toBe('2026-W10');
    expect(isoWeekLabel(ms('2025-12-29'))).toBe('2026-W01');
    expect(isoWeekLabel(startOfIsoWeek(ms('2021-01-03')))).toBe('2020-W53');
    expect(isoWeekLabel(startOfIsoWeek(ms('2024-12-30')))).toBe('2025-W01');
  });

  test('day, week and month buckets', () => {
    const late = Date.parse('2026-02-28T23:59:59Z');
    expect(bucketStart('day', late)).toBe(ms('2026-02-28'));
    expect(bucketStart('month', late)).toBe(ms('2026-02-01'));
    expect(nextBucket('month', ms('2026-02-01'))).toBe(ms('2026-03-01'));
    expect(nextBucket('month', ms('2026-12-01'))).toBe(ms('2027-01-01'));
    expect(nextBucket('week', ms('2026-02-23'))).toBe(ms('2026-03-02'));
    expect(bucketLabel('month', ms('2026-03-01'))).toBe('2026-03');
    expect(bucketLabel('day', ms('2026-03-01'))).toBe('2026-03-01');
  });
});
