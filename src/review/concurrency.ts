/**
 * Maps `items` with at most `limit` calls of `fn` running at once; the results keep the items' order.
 * The first rejection rejects the whole map (calls already started run to their end).
 */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, () => worker());
  await Promise.all(workers);
  return results;
}

/** A reader that reads each key (a path, a head) once (per run, or per process) (concurrent callers share the read). */
export function cachedReader<T>(read: (key: string) => Promise<T>) {
  const cache = new Map<string, Promise<T>>();
  return (key: string) => {
    if (!cache.has(key)) cache.set(key, read(key));
    return cache.get(key)!;
  };
}
