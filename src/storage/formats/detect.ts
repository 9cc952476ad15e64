/**
 * Which format a backlog folder is in: Backlog.md when its `config.yml` has Backlog.md's settings, or
 * (without one) when its folders are laid out as Backlog.md lays them out; the native format otherwise.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isBacklogError } from '../../errors.js';
import { readInsideRoot } from '../root-path.js';
import { parseSettingsFile } from '../settings-yaml.js';
import type { Diagnostic } from '../types.js';
import {
  BACKLOG_MD_CONFIG_FILE,
  BACKLOG_MD_CONFIG_KEYS,
  backlogMdConfig,
  backlogMdFormat,
} from './backlog-md.js';
import { nativeFormat } from './native.js';
import type { BacklogFormat, FormatName } from './types.js';

export type { BacklogFormat, BacklogConfig, FileRole, FormatName } from './types.js';
export { FORMAT_NAMES } from './types.js';
export { nativeFormat } from './native.js';

/** A config.yml is a few hundred bytes; this bounds what a hostile one can cost. */
const MAX_CONFIG_BYTES = 256 * 1024;

/** Folders only Backlog.md makes beside `tasks/`. */
const BACKLOG_MD_FOLDERS = ['completed', 'drafts', 'decisions', 'archive', 'milestones'];

/**
 * The format of the backlog at `root`. `forced` skips detection (`native` or `backlog-md`). Never throws
 * for a bad config: it is reported in `configDiagnostics`, and Backlog.md's defaults stand in.
 */
export async function detectFormat(root: string, forced?: FormatName): Promise<BacklogFormat> {
  if (forced === 'native') return nativeFormat;
  const config = await readConfig(root);
  if (config.data && BACKLOG_MD_CONFIG_KEYS.some((k) => k in config.data!)) {
    const { config: settings, problems } = backlogMdConfig(config.data);
    return backlogMdFormat(settings, config.text, [...config.diagnostics, ...problems.map(configProblem)]);
  }
  if (forced === 'backlog-md' || (await looksLikeBacklogMd(root))) {
    const { config: settings } = backlogMdConfig({});
    return backlogMdFormat(settings, config.text, config.diagnostics);
  }
  return nativeFormat;
}

function configProblem(message: string): Diagnostic {
  return { level: 'warning', path: BACKLOG_MD_CONFIG_FILE, line: null, code: 'config_value', message };
}

async function readConfig(
  root: string,
): Promise<{ data: Record<string, unknown> | null; text: string; diagnostics: Diagnostic[] }> {
  try {
    const { bytes, complete } = await readInsideRoot(root, BACKLOG_MD_CONFIG_FILE, MAX_CONFIG_BYTES);
    if (!complete)
      return {
        data: null,
        text: '',
        diagnostics: [configProblem(`over ${MAX_CONFIG_BYTES} bytes; not read`)],
      };
    const text = bytes.toString('utf8');
    const parsed = await parseSettingsFile(text);
    if (parsed.error)
      return {
        data: null,
        text,
        diagnostics: [
          {
            level: 'error',
            path: BACKLOG_MD_CONFIG_FILE,
            line: null,
            code: 'config_unparseable',
            message: `${parsed.error}; the backlog is read with default settings`,
          },
        ],
      };
    return { data: parsed.data, text, diagnostics: [] };
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    if (missing) return { data: null, text: '', diagnostics: [] };
    const why = isBacklogError(err) ? err.message : (err as Error).message;
    return { data: null, text: '', diagnostics: [configProblem(`not read: ${why}`)] };
  }
}

/** `tasks/` beside one of Backlog.md's own folders, and task files named `prefix-N - Title.md`. */
async function looksLikeBacklogMd(root: string): Promise<boolean> {
  const top = await readdir(root).catch(() => [] as string[]);
  if (!top.includes('tasks') || !BACKLOG_MD_FOLDERS.some((f) => top.includes(f))) return false;
  const tasks = await readdir(join(root, 'tasks')).catch(() => [] as string[]);
  return tasks.some((name) => /^[A-Za-z]+-\d+(?:\.\d+)* - .+\.md$/i.test(name));
}
