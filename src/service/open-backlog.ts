import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { BacklogError } from '../errors.js';
import type { SearchSettings } from '../search/orama-search-service.js';
import { BacklogService } from './backlog-service.js';

export interface OpenBacklogOptions {
  /** Backlog root; default `BACKLOG_DIR` or `./backlog`. */
  dir?: string;
  /** Keep the index in step with the files (arrives with live updates; accepted and ignored until then). */
  watch?: boolean;
  /** `none` (lexical only) is the one provider so far; others arrive with hybrid search. */
  embeddings?: 'auto' | 'none' | 'bundled' | 'transformers';
  search?: Partial<SearchSettings>;
  onProgress?: (phase: 'read' | 'index', done: number, total: number) => void;
}

export function defaultBacklogDir(): string {
  return resolve(process.env.BACKLOG_DIR || 'backlog');
}

/** Opens a backlog folder and resolves to a ready BacklogService (files read, index built). */
export async function openBacklog(options: OpenBacklogOptions = {}): Promise<BacklogService> {
  const dir = resolve(options.dir ?? defaultBacklogDir());
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) {
    throw new BacklogError(
      'NOT_FOUND',
      `Backlog folder not found: ${dir}`,
      'Pass --dir (or BACKLOG_DIR) pointing at a folder with tasks/ and resources/.',
      { dir },
    );
  }
  const service = new BacklogService({ dir, search: options.search });
  await service.reload(options.onProgress);
  return service;
}
