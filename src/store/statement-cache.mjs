// A prepared statement per SQL text for one better-sqlite3 connection, at most `max` kept (the oldest
// goes first). Plain JavaScript: the store's threads (thread-serve.mjs) load it without TypeScript, and
// the main thread's reader (sqlite-client.ts) uses it too.
export function statementCache(db, max) {
  const statements = new Map();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (statements.size >= max) statements.delete(statements.keys().next().value);
      statements.set(sql, statement);
    }
    return statement;
  };
}
