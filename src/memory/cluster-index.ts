import type { ClusterStanding, ClusterText, SuppressionStore } from '../store/suppression.js';
import { AlikeIndex } from './alike.js';

/**
 * The clusters of a repository as a review matches its findings against them (memory/suppress.ts), kept
 * between reviews in this process. An exemplar's text never changes once its cluster is created, so the
 * index of the texts (memory/alike.ts: tokenised and numbered once) stays right for as long as the
 * repository's clusters are the same ones: each review reads the clusters' ids with their action and
 * feedback (a light read, no text) and uses the index when the ids it was built from are the first ones
 * of that list; clusters created since are read and added; when one was deleted the index is built again.
 * Nothing is trusted without that read, so two processes never disagree through it.
 */

type Entry = { ids: string[]; index: AlikeIndex<ClusterText> };

/** Repositories whose index one store keeps (the least recently used goes first). */
export const MAX_CACHED_REPOS = 16;

const caches = new WeakMap<SuppressionStore, Map<string, Entry>>();

export type ClusterMemory = {
  index: AlikeIndex<ClusterText>;
  standing: ReadonlyMap<string, ClusterStanding>;
};

/** The clusters of `repo`: their texts indexed for matching, and their standing as read now. */
export async function clusterMemory(store: SuppressionStore, repo: string): Promise<ClusterMemory> {
  let repos = caches.get(store);
  if (!repos) caches.set(store, (repos = new Map()));
  const key = repo.toLowerCase();
  let entry = repos.get(key);
  let standing: ClusterStanding[];
  if (!entry) {
    // Nothing indexed yet: the clusters with their texts in one read.
    const clusters = await store.clusters(repo);
    standing = clusters;
    entry = { ids: [], index: new AlikeIndex<ClusterText>() };
    append(
      entry,
      clusters.map((c) => c.id),
      clusters,
    );
  } else {
    standing = await store.standing(repo);
    const ids = standing.map((c) => c.id);
    if (!startsWith(ids, entry.ids)) {
      entry = { ids: [], index: new AlikeIndex<ClusterText>() };
      append(entry, ids, await store.texts(repo, ids));
    } else if (entry.ids.length < ids.length) {
      const fresh = ids.slice(entry.ids.length);
      append(entry, fresh, await store.texts(repo, fresh));
    }
  }
  repos.delete(key);
  repos.set(key, entry);
  if (repos.size > MAX_CACHED_REPOS) repos.delete(repos.keys().next().value!);
  return { index: entry.index, standing: new Map(standing.map((c) => [c.id, c])) };
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
