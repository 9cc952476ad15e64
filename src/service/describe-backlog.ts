/**
 * What a backlog says of itself before its files are read: its format (config.yml) and vocabulary, as a
 * BacklogService that has not read its items says it. The MCP stdio server describes itself from this at
 * `initialize`, before the service's modules are loaded (issue #23).
 */
import { realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { DEMO_BACKLOG_DIR } from '../storage/demo.js';
import { detectFormat, type BacklogFormat, type FormatName } from '../storage/formats/detect.js';
import type { BacklogVocabulary } from './responses.js';

export interface BacklogDescription {
  format: BacklogFormat;
  isDemo: boolean;
  /** With no example ids: none is known before the items are read. */
  vocabulary(): BacklogVocabulary;
}

export async function describeBacklog(dir: string, forced?: FormatName): Promise<BacklogDescription> {
  const format = await detectFormat(dir, forced);
  const vocabulary: BacklogVocabulary = {
    project: projectNameOf(format, dir),
    format: format.name,
    ...format.vocabulary,
    example_ids: [],
  };
  return { format, isDemo: isDemoFolder(dir), vocabulary: () => vocabulary };
}

/** The backlog's name: Backlog.md's `project_name`, else the folder that holds `backlog/` (or the folder's own). */
export function projectNameOf(format: BacklogFormat, dir: string): string {
  const project = format.config.project?.trim();
  if (project) return project;
  const folder = basename(dir);
  return folder.toLowerCase() === 'backlog' ? basename(dirname(dir)) || folder : folder;
}

/** Whether `dir` is the built-in demo backlog; by real paths: a symlinked install (pnpm, npm link) reaches it by another path. */
export function isDemoFolder(dir: string): boolean {
  try {
    return dir === DEMO_BACKLOG_DIR || realpathSync(dir) === realpathSync(DEMO_BACKLOG_DIR);
  } catch {
    return false;
  }
}
