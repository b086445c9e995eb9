/**
 * CSV for the report export: RFC 4180 (a header row, CRLF line ends, a field holding a comma, a quote,
 * CR or LF is quoted and its quotes doubled) with formula-injection protection: a text cell that starts
 * with `=`, `+`, `-`, `@`, a tab or a CR is prefixed with `'`, so a spreadsheet shows it as text instead
 * of evaluating it. Numbers and booleans are written as they are.
 */

export type CsvCell = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell: empty for null/undefined, protected against formulas, quoted when it must be. */
export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'number') text = Number.isFinite(value) ? String(value) : '';
  else if (typeof value === 'boolean') text = value ? 'true' : 'false';
  else text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(cells: readonly CsvCell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** A column: its header and how to read it from a row. */
export type CsvColumn<T> = [header: string, value: (row: T) => CsvCell];

/** A table as CSV: the header row, then one line per row. */
export function csvTable<T>(columns: readonly CsvColumn<T>[], rows: readonly T[]): Buffer {
  const lines: string[] = [csvRow(columns.map(([header]) => header))];
  for (const row of rows) lines.push(csvRow(columns.map(([, value]) => value(row))));
  return Buffer.from(lines.join(''), 'utf8');
}
