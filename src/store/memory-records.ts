import { parseJson, toBool } from './db.js';

/** The records of memory (NAMES.md "Memory") and how a stored row becomes one. */

export const MEMORY_SOURCES = ['operator', 'comment', 'feedback'] as const;
export type MemorySource = (typeof MEMORY_SOURCES)[number];
export const CLUSTER_ACTIONS = ['none', 'suppress', 'keep'] as const;
export type ClusterAction = (typeof CLUSTER_ACTIONS)[number];

/** A rule the reviews follow (review-engine 2.3 `contextIds` cite these ids). */
export type MemoryContext = {
  id: string;
  /** `owner/name`, or null for every repository of the workspace. */
  repo: string | null;
  /** Path globs (operator-api 2.10); empty: every path. */
  paths: string[];
  title: string;
  body: string;
  enabled: boolean;
  source: MemorySource;
  revision: number;
  createdAt: number;
  updatedAt: number;
  createdBy: string;
};

export type ClusterExemplar = { title: string; body: string; category: string | null; path: string | null };
export type ClusterFeedback = { up: number; down: number; dismissed: number; addressed: number };

/** Findings that look alike, and what reviewers did with them. */
export type MemoryCluster = {
  id: string;
  repo: string;
  label: string;
  action: ClusterAction;
  /** How many findings were folded into it. */
  size: number;
  exemplar: ClusterExemplar;
  feedback: ClusterFeedback;
  revision: number;
  createdAt: number;
  updatedAt: number;
};

/** A knowledge document as the list shows it (no body). */
export type KnowledgeSummary = {
  repo: string;
  path: string;
  title: string;
  revision: number;
  updatedAt: number;
  /** The body's length in UTF-8 bytes. */
  bytes: number;
};

export type KnowledgeDocument = {
  repo: string;
  path: string;
  title: string;
  body: string;
  revision: number;
  updatedAt: number;
};

/** The outcome of a write of an existing record. */
export type MemoryWrite<T> =
  | { ok: true; value: T }
  | { ok: false; code: 'not_found' }
  | { ok: false; code: 'revision_conflict'; revision: number };

export type Raw = Record<string, unknown>;

export function mapContext(r: Raw): MemoryContext {
  return {
    id: String(r.id),
    repo: (r.repo as string | null) ?? null,
    paths: parseJson<string[]>(r.paths, []),
    title: String(r.title),
    body: String(r.body),
    enabled: toBool(r.enabled),
    source: String(r.source) as MemorySource,
    revision: Number(r.revision),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    createdBy: String(r.created_by),
  };
}

export function mapCluster(r: Raw): MemoryCluster {
  return {
    id: String(r.id),
    repo: String(r.repo),
    label: String(r.label),
    action: String(r.action) as ClusterAction,
    size: Number(r.size),
    exemplar: {
      title: String(r.exemplar_title),
      body: String(r.exemplar_body),
      category: (r.exemplar_category as string | null) ?? null,
      path: (r.exemplar_path as string | null) ?? null,
    },
    feedback: {
      up: Number(r.feedback_up),
      down: Number(r.feedback_down),
      dismissed: Number(r.feedback_dismissed),
      addressed: Number(r.feedback_addressed),
    },
    revision: Number(r.revision),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export function mapSummary(r: Raw): KnowledgeSummary {
  return {
    repo: String(r.repo),
    path: String(r.path),
    title: String(r.title),
    revision: Number(r.revision),
    updatedAt: Number(r.updated_at),
    bytes: Number(r.bytes),
  };
}

export function mapDocument(r: Raw): KnowledgeDocument {
  return {
    repo: String(r.repo),
    path: String(r.path),
    title: String(r.title),
    body: String(r.body),
    revision: Number(r.revision),
    updatedAt: Number(r.updated_at),
  };
}
