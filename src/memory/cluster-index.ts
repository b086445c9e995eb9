import type { ClusterText, SuppressionStore } from '../store/suppression.js';
import { AlikeIndex } from './alike.js';

/**
 * The clusters of a repository as a review matches its findings against them (memory/suppress.ts): their
 * exemplar texts, tokenised and numbered once (memory/alike.ts) and kept between reviews in this process.
 * An exemplar's text never changes once its cluster is created, so the index stays right for as long as
 * the repository has the same clusters. Each review reads the repository's stamp (how many clusters, and
 * when the newest was created: one aggregate over the `lower(repo)` index); while it is the one the index
 * was checked at, and for at most `RECHECK_MS`, the index is used as it is. Otherwise the clusters' ids are
 * read: when the indexed ones are the first of them, the clusters created since are read and added; when
 * one was deleted, the index is built again. What decides whether a cluster withholds (its action and
 * feedback) is never kept: it is read for the clusters the findings matched, each review.
 */

type Entry = { ids: string[]; index: AlikeIndex<ClusterText>; stamp: string; checkedAt: number };

/** Repositories whose index one store keeps (the least recently used goes first). */
export const MAX_CACHED_REPOS = 16;
/** Longest an index is trusted on its stamp alone before its ids are read again. */
export const RECHECK_MS = 60_000;

const caches = new WeakMap<SuppressionStore, Map<string, Entry>>();

/** The exemplar texts of the clusters of `repo`, indexed for matching; `now` is the review's clock. */
export async function clusterIndex(
  store: SuppressionStore,
  repo: string,
  now: number,
): Promise<AlikeIndex<ClusterText>> {
  let repos = caches.get(store);
  if (!repos) caches.set(store, (repos = new Map()));
  const key = repo.toLowerCase();
  const stamp = await store.stamp(repo);
  let entry = repos.get(key);
  if (entry && (entry.stamp !== stamp || now - entry.checkedAt >= RECHECK_MS || now < entry.checkedAt)) {
    const ids = await store.ids(repo);
    if (!startsWith(ids, entry.ids)) entry = undefined;
    else if (entry.ids.length < ids.length) {
      const fresh = ids.slice(entry.ids.length);
      append(entry, fresh, await store.texts(repo, fresh));
    }
    if (entry) Object.assign(entry, { stamp, checkedAt: now });
  }
  if (!entry) {
    const texts = await store.texts(repo);
    entry = { ids: [], index: new AlikeIndex<ClusterText>(), stamp, checkedAt: now };
    append(
      entry,
      texts.map((t) => t.id),
      texts,
    );
  }
  repos.delete(key);
  repos.set(key, entry);
  if (repos.size > MAX_CACHED_REPOS) repos.delete(repos.keys().next().value!);
  return entry.index;
}

function startsWith(ids: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

/** Adds the clusters `ids` in order, up to the first whose text is gone (deleted since: read again next time). */
function append(entry: Entry, ids: readonly string[], texts: readonly ClusterText[]): void {
  const byId = new Map(texts.map((t) => [t.id, t]));
  for (const id of ids) {
    const text = byId.get(id);
    if (!text) return;
    entry.index.add(text);
    entry.ids.push(id);
  }
}
