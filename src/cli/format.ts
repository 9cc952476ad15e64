import type { GetEntry, ListResponse, SearchResponse } from '../service/backlog-service.js';
import { atLeast, type DiagnosticsReport } from '../service/diagnostics.js';
import type { DiagnosticLevel } from '../storage/types.js';

/** Human output: one line per hit, its snippet under it. */
export function formatSearch(res: SearchResponse): string {
  const lines = [
    `${res.total} result${res.total === 1 ? '' : 's'} for "${res.query}" (${res.search_mode}, ${res.took_ms} ms)`,
  ];
  for (const w of res.warnings ?? []) lines.push(`warning: ${w}`);
  for (const r of res.results) {
    const kind = r.status ? `${r.type}/${r.status}` : r.type;
    const score = r.score !== undefined ? `  ${r.score.toFixed(3)}` : '';
    const semantic = r.match === 'semantic' ? '  [semantic]' : '';
    lines.push(`${r.id}  [${kind}]${semantic}  ${r.title}${score}`);
    if (r.snippet.text) lines.push(`    ${r.snippet.text}`);
  }
  if (res.next_offset !== undefined) lines.push(`more: --offset ${res.next_offset}`);
  for (const g of res.groups ?? []) {
    lines.push('', `${g.key} (${g.count})`);
    for (const r of g.results) lines.push(`  ${r.id}  ${r.title}`);
  }
  if (res.related?.length) {
    lines.push('', 'related:');
    const label = { parent: 'parent of', children: 'child of', references: 'linked to' };
    for (const r of res.related)
      lines.push(
        `  ${r.id}  [${label[r.relation]} ${r.via}, ${r.distance} hop${r.distance > 1 ? 's' : ''}]  ${r.title}`,
      );
  }
  return lines.join('\n');
}

export function formatList(res: ListResponse): string {
  const counts = Object.entries(res.counts_by_status)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  const lines = [`${res.total} items (${counts})`];
  for (const r of res.results)
    lines.push(`${r.id}  [${r.status ? `${r.type}/${r.status}` : r.type}]  ${r.title}`);
  return lines.join('\n');
}

export function formatGet(entries: GetEntry[]): string {
  return entries
    .map((e) => {
      if (e.status === 'error') return `${e.id}: ${e.error.code} ${e.error.message}\nhint: ${e.error.hint}`;
      const i = e.item;
      const meta = [
        `type: ${i.type}`,
        i.status && `status: ${i.status}`,
        i.parent_id && `parent: ${i.parent_id}`,
        i.tags.length && `tags: ${i.tags.join(', ')}`,
        `path: ${i.path}`,
      ]
        .filter(Boolean)
        .join(' | ');
      return `# ${i.title}\n${i.id} | ${meta}\n\n${i.body.trim()}`;
    })
    .join('\n\n---\n\n');
}

/** The report: the format, one summary line per kind (all levels), then the findings at `level` or worse. */
export function formatDiagnostics(d: DiagnosticsReport, level: DiagnosticLevel = 'warning'): string {
  const e = d.embeddings;
  const embed =
    e.provider === 'none'
      ? 'embeddings off'
      : `embeddings ${e.provider}, ${e.state} (${e.done}/${e.total} chunks)`;
  const states = Object.entries(d.by_state)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  const format =
    d.format.name === 'backlog-md'
      ? `Backlog.md format (${d.format.config_path ?? 'folder layout'}: statuses ${d.format.statuses.join(', ')}; ids ${d.format.task_prefix}-N)`
      : 'native format';
  const lines = [
    `${d.items} items (${Object.entries(d.by_type)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}${states ? `; tasks ${states}` : ''}), ${format}, search mode ${d.search_mode}, ${embed}`,
    ...e.warnings.map((w) => `warning: ${w}`),
    ...(e.buildNote ? [`note: ${e.buildNote}`] : []),
  ];
  // The summary shows every level unless a stricter one was asked for.
  const summaryLevel = level === 'warning' ? 'info' : level;
  for (const s of d.summary)
    if (atLeast(s.level, summaryLevel)) lines.push(`${s.level.padEnd(7)} ${s.message}`);
  const shown = d.files.filter((f) => atLeast(f.level, level));
  if (!d.files.some((f) => f.level !== 'info')) lines.push('No problems found.');
  if (shown.length) lines.push('');
  for (const f of shown)
    lines.push(`${f.level} ${f.path}${f.line ? `:${f.line}` : ''} ${f.code}: ${f.message}`);
  const hidden = d.files.length - shown.length;
  if (hidden) lines.push(`(${hidden} more at a lower level: --level info shows them)`);
  return lines.join('\n');
}
