/** See statement-cache.mjs. */
export function statementCache<S>(db: { prepare(sql: string): S }, max: number): (sql: string) => S;
