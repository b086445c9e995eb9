import type { D1 } from './env.js';
import { quoteName } from './state-schema.js';

/**
 * Brings an existing D1 table up to the columns its `CREATE TABLE` statement names: a database made by an
 * earlier build keeps its tables (`CREATE TABLE IF NOT EXISTS` leaves them as they are), so each column the
 * statement has and `PRAGMA table_info` does not is added with `ALTER TABLE ... ADD COLUMN` and its
 * definition as written. Rows are kept (an added column holds its default, else NULL). What SQLite cannot
 * add to a table in place (a PRIMARY KEY or UNIQUE column; NOT NULL without a default when the table holds
 * rows) is an error naming the table and the column; a table's own constraints are not changed.
 */

export type TableColumns = { table: string; columns: Array<{ name: string; definition: string }> };

const IDENTIFIER = /^(?:"((?:[^"]|"")+)"|`((?:[^`]|``)+)`|\[([^\]]+)\]|([A-Za-z_][A-Za-z0-9_$]*))/;
/** Words that open a table constraint rather than a column definition. */
const TABLE_CONSTRAINT = /^(constraint|primary|unique|check|foreign)\b/i;

function identifier(text: string): { name: string; rest: string } | null {
  const m = IDENTIFIER.exec(text);
  if (!m) return null;
  const name = m[1]?.replace(/""/g, '"') ?? m[2]?.replace(/``/g, '`') ?? m[3] ?? m[4]!;
  return { name, rest: text.slice(m[0].length) };
}

/** The parts of `body` split at its top-level commas (not inside parentheses or quotes). */
function topLevelParts(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '[') quote = ']';
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(body.slice(start).trim());
  return parts.filter((p) => p.length > 0);
}

/** The table and column definitions of a `CREATE TABLE` statement; null for any other statement. */
export function tableColumns(sql: string): TableColumns | null {
  const head = /^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?/i.exec(sql);
  if (!head) return null;
  const named = identifier(sql.slice(head[0].length));
  if (!named) return null;
  const open = named.rest.indexOf('(');
  const close = named.rest.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const columns: TableColumns['columns'] = [];
  for (const part of topLevelParts(named.rest.slice(open + 1, close))) {
    if (TABLE_CONSTRAINT.test(part)) continue;
    const column = identifier(part);
    if (column) columns.push({ name: column.name, definition: part });
  }
  return { table: named.name, columns };
}

type TableInfo = { results: Array<{ name: string }> };
const tableInfo = (db: D1, table: string) => db.prepare(`PRAGMA table_info(${quoteName(table)})`);
const columnNames = (info: TableInfo) => new Set(info.results.map((c) => c.name.toLowerCase()));

/**
 * Adds to each table (which exists) the columns its statement names and it lacks; answers what was added
 * (`table.column`). A column another worker added meanwhile is not an error.
 */
export async function addMissingColumns(db: D1, tables: readonly TableColumns[]): Promise<string[]> {
  if (tables.length === 0) return [];
  const infos = (await db.batch(tables.map((t) => tableInfo(db, t.table)))) as TableInfo[];
  const added: string[] = [];
  for (const [i, { table, columns }] of tables.entries()) {
    const present = columnNames(infos[i]!);
    for (const column of columns) {
      if (present.has(column.name.toLowerCase())) continue;
      try {
        await db.prepare(`ALTER TABLE ${quoteName(table)} ADD COLUMN ${column.definition}`).run();
      } catch (error) {
        if (columnNames(await tableInfo(db, table).all()).has(column.name.toLowerCase())) continue;
        throw new Error(
          `D1 table ${table} lacks column ${column.name} and SQLite cannot add it in place: ${(error as Error).message}`,
        );
      }
      added.push(`${table}.${column.name}`);
    }
  }
  return added;
}
