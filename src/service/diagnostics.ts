/**
 * What `diagnostics` reports: one summary line per kind of finding, with a count, then the findings
 * per file. The status lines say how the backlog's statuses compare with its configured ones, so a
 * Backlog.md user sees `412 tasks use status "To Do", configured in config.yml: fine` rather than a
 * warning per file.
 */
import type { SemanticStatus } from '../embeddings/semantic-search.js';
import type { SearchMode } from '../search/types.js';
import type { BacklogFormat, FormatName } from '../storage/formats/detect.js';
import { statusKey } from '../storage/ids.js';
import { ITEM_TYPES, type BacklogItem, type Diagnostic, type DiagnosticLevel } from '../storage/types.js';

export const DIAGNOSTIC_LEVELS: readonly DiagnosticLevel[] = ['error', 'warning', 'info'];

export interface DiagnosticSummary {
  level: DiagnosticLevel;
  /** The kind: a diagnostic code, or `status` for the status lines. */
  code: string;
  count: number;
  message: string;
}

/** True when `level` is at least as severe as `threshold` (error > warning > info). */
export function atLeast(level: DiagnosticLevel, threshold: DiagnosticLevel): boolean {
  return DIAGNOSTIC_LEVELS.indexOf(level) <= DIAGNOSTIC_LEVELS.indexOf(threshold);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const uses = (n: number) => `${plural(n, 'task')} ${n === 1 ? 'uses' : 'use'}`;

/** Summary lines: the statuses in use against the configured ones, then one line per diagnostic code. */
export function summarizeDiagnostics(
  files: Diagnostic[],
  items: Iterable<BacklogItem>,
  format: BacklogFormat,
): DiagnosticSummary[] {
  const lines: DiagnosticSummary[] = [];
  const configured = new Map(format.config.statuses.map((s) => [statusKey(s), s]));
  // Backlog.md accepts `Draft` besides its configured statuses (its drafts have it).
  const accepted = (key: string) => configured.has(key) || (format.name === 'backlog-md' && key === 'draft');
  const where = format.configPath ? `configured in ${format.configPath}` : 'a status of the native format';
  const byStatus = new Map<string, { spelling: string; count: number }>();
  for (const item of items) {
    if ((item.type !== 'task' && item.type !== 'epic') || !item.status) continue;
    const key = statusKey(item.status);
    const entry = byStatus.get(key) ?? { spelling: item.status, count: 0 };
    entry.count++;
    byStatus.set(key, entry);
  }
  const ordered = [...byStatus].sort(
    ([a], [b]) =>
      (configured.has(a) ? [...configured.keys()].indexOf(a) : 1e9) -
      (configured.has(b) ? [...configured.keys()].indexOf(b) : 1e9),
  );
  for (const [key, { spelling, count }] of ordered) {
    const known = accepted(key);
    lines.push({
      level: known || format.name === 'backlog-md' ? 'info' : 'warning',
      code: 'status',
      count,
      message: known
        ? `${uses(count)} status "${configured.get(key) ?? spelling}", ${configured.has(key) ? where : 'which Backlog.md accepts for drafts'}: fine`
        : `${uses(count)} status "${spelling}", not ${format.configPath ? `in ${format.configPath}` : 'a native status'} (${format.config.statuses.join(', ')})`,
    });
  }
  const byCode = new Map<string, { level: DiagnosticLevel; count: number; example: string }>();
  for (const d of files) {
    if (d.code === 'unknown_status') continue; // the status lines above say it, with counts
    const entry = byCode.get(d.code) ?? { level: d.level, count: 0, example: d.message };
    entry.count++;
    if (atLeast(d.level, entry.level)) entry.level = d.level;
    byCode.set(d.code, entry);
  }
  const bySeverity = [...byCode].sort(
    ([, a], [, b]) =>
      DIAGNOSTIC_LEVELS.indexOf(a.level) - DIAGNOSTIC_LEVELS.indexOf(b.level) || b.count - a.count,
  );
  for (const [code, { level, count, example }] of bySeverity)
    lines.push({ level, code, count, message: `${plural(count, 'file')}: ${code} (e.g. ${example})` });
  return lines;
}

export interface DiagnosticsReport {
  /** The format the folder is read in, and its settings. */
  format: { name: FormatName; config_path: string | null; statuses: string[]; task_prefix: string };
  items: number;
  by_type: Record<string, number>;
  by_state: Record<string, number>;
  /** The mode a search runs in when it does not ask for one. */
  search_mode: SearchMode;
  embeddings: SemanticStatus;
  /** One line per kind of finding, with a count. */
  summary: DiagnosticSummary[];
  files: Diagnostic[];
}

/** The whole report: counts by type and state, the summary lines, the findings per file. */
export function diagnosticsReport(
  items: Iterable<BacklogItem>,
  files: Diagnostic[],
  format: BacklogFormat,
  status: { search_mode: SearchMode; embeddings: SemanticStatus },
): DiagnosticsReport {
  const all = [...items];
  // The three kinds every backlog has, and any other kind that occurs.
  const byType: Record<string, number> = { task: 0, epic: 0, resource: 0 };
  const byState: Record<string, number> = {};
  for (const item of all) {
    byType[item.type] = (byType[item.type] ?? 0) + 1;
    if (item.state) byState[item.state] = (byState[item.state] ?? 0) + 1;
  }
  return {
    format: {
      name: format.name,
      config_path: format.configPath,
      statuses: format.config.statuses,
      task_prefix: format.config.taskPrefix,
    },
    items: all.length,
    by_type: Object.fromEntries(ITEM_TYPES.filter((t) => t in byType).map((t) => [t, byType[t]])),
    by_state: byState,
    ...status,
    summary: summarizeDiagnostics(files, all, format),
    files,
  };
}
