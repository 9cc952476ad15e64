import type { GetEntry, ListResponse, SearchResponse } from '../service/backlog-service.js';
import { atLeast, type DiagnosticsReport } from '../service/diagnostics.js';
import type { DiagnosticLevel, TaskState } from '../storage/types.js';
import { kindLabel, stateNote } from '../service/summary.js';
import { highlight, highlightStems, plain, terminalSafe, type Style } from './style.js';

/** The filters a command was given, as its flags: `--type epic --status done`; '' when none. */
export function describeFilters(flags: Record<string, unknown>): string {
  return Object.entries(flags)
    .filter(([, v]) => v !== undefined)
    .map(([flag, v]) => `--${flag} ${String(v)}`)
    .join(' ');
}

const clean = (text: string) => terminalSafe(text);

/** `[archived]  ` before a title on the short lines (groups, related) when the item is not live. */
const noted = (r: { state: TaskState | null }, style: Style) =>
  stateNote(r.state) ? `${style.dim(`[${stateNote(r.state)}]`)}  ` : '';

/** Human output: one line per hit, its snippet under it, the query's words marked when `style` colours. */
export function formatSearch(res: SearchResponse, style: Style = plain, filters = '', offset = 0): string {
  const where = filters ? `, filters ${filters}` : '';
  const about = `(${res.search_mode}, ${res.took_ms} ms${where})`;
  const lines = [
    res.total === 0 && res.results.length === 0
      ? `Nothing matched "${clean(res.query)}" ${about}.${res.suggestions?.length ? ` Did you mean ${res.suggestions.map((s) => `"${clean(s)}"`).join(' or ')}?` : ''}`
      : `${res.total} result${res.total === 1 ? '' : 's'} for "${clean(res.query)}" ${about}`,
  ];
  // The service's own "nothing matched" warning is the line above.
  for (const w of res.warnings ?? [])
    if (!w.startsWith('nothing matched')) lines.push(style.yellow(`warning: ${clean(w)}`));
  if (res.total > 0 && res.results.length === 0) lines.push(`No results past --offset ${offset}.`);
  const stems = style.isColorSupported ? highlightStems(res.query) : [];
  const mark = (text: string) => highlight(clean(text), stems, (w) => style.bold(style.yellow(w)));
  for (const r of res.results) {
    const kind = clean(kindLabel(r));
    const score = r.score !== undefined ? style.dim(`  ${r.score.toFixed(3)}`) : '';
    const semantic = r.match === 'semantic' ? style.magenta('  [semantic]') : '';
    lines.push(
      `${style.cyan(clean(r.id))}  ${style.dim(`[${kind}]`)}${semantic}  ${style.bold(mark(r.title))}${score}`,
    );
    if (r.snippet.text) lines.push(`    ${mark(r.snippet.text)}`);
    // The same document in other projects, collapsed into this result (docs/workspace.md).
    if (r.also_in?.length) lines.push(style.dim(`    also in ${r.also_in.map(clean).join(', ')}`));
  }
  if (res.next_offset !== undefined) lines.push(style.dim(`more: --offset ${res.next_offset}`));
  for (const g of res.groups ?? []) {
    lines.push('', style.bold(`${g.key} (${g.count})`));
    for (const r of g.results)
      lines.push(`  ${style.cyan(clean(r.id))}  ${noted(r, style)}${clean(r.title)}`);
  }
  if (res.related?.length) {
    lines.push('', style.bold('related:'));
    const label = { parent: 'parent of', children: 'child of', references: 'linked to' };
    for (const r of res.related)
      lines.push(
        `  ${style.cyan(clean(r.id))}  ${noted(r, style)}${style.dim(`[${label[r.relation]} ${clean(r.via)}, ${r.distance} hop${r.distance > 1 ? 's' : ''}]`)}  ${clean(r.title)}`,
      );
  }
  return lines.join('\n');
}

/** One line per item; when nothing is listed, a sentence that says why (no items, or the filters). */
export function formatList(res: ListResponse, style: Style = plain, filters = '', offset = 0): string {
  const notShown = Object.entries(res.not_shown ?? {}).map(([state, n]) => `${n} ${state}`);
  const more = notShown.length ? `Not shown: ${notShown.join(', ')} (--state all shows them).` : '';
  if (res.total === 0)
    return [
      filters
        ? `Nothing matched ${filters}.${/--status /.test(filters) ? ` Statuses in this backlog: ${res.statuses.map(clean).join(', ')}.` : ''}`
        : notShown.length
          ? 'No live items.'
          : 'The backlog has no items.',
      more,
    ]
      .filter(Boolean)
      .join(' ');
  const counts = Object.entries(res.counts_by_status)
    .map(([k, v]) => `${clean(k)}: ${v}`)
    .join(', ');
  const shown =
    res.results.length === res.total
      ? ''
      : res.results.length === 0
        ? `, none past --offset ${offset}`
        : `, ${offset + 1}-${offset + res.results.length} shown`;
  const lines = [`${res.total} item${res.total === 1 ? '' : 's'}${shown} (${counts})`];
  for (const r of res.results)
    lines.push(`${style.cyan(clean(r.id))}  ${style.dim(`[${clean(kindLabel(r))}]`)}  ${clean(r.title)}`);
  if (res.next_offset !== undefined) lines.push(style.dim(`more: --offset ${res.next_offset}`));
  if (more) lines.push(style.dim(more));
  return lines.join('\n');
}

export function formatGet(entries: GetEntry[], style: Style = plain): string {
  return entries
    .map((e) => {
      if (e.status === 'error')
        return `${style.red(`${clean(e.id)}: ${e.error.code}`)} ${clean(e.error.message)}\nhint: ${clean(e.error.hint)}`;
      const i = e.item;
      const meta = [
        `type: ${i.type}`,
        i.status && `status: ${i.status}`,
        stateNote(i.state) && `state: ${i.state}`,
        i.parent_id && `parent: ${i.parent_id}`,
        i.tags.length && `tags: ${i.tags.join(', ')}`,
        `path: ${i.path}`,
      ]
        .filter(Boolean)
        .join(' | ');
      return `${style.bold(`# ${clean(i.title)}`)}\n${style.cyan(clean(i.id))} | ${clean(meta)}\n\n${terminalSafe(i.body.trim(), true)}`;
    })
    .join('\n\n---\n\n');
}

/** The report: the format, one summary line per kind (all levels), then the findings at `level` or worse. */
export function formatDiagnostics(
  d: DiagnosticsReport,
  level: DiagnosticLevel = 'warning',
  style: Style = plain,
): string {
  const paint = (l: DiagnosticLevel, text: string) =>
    l === 'error' ? style.red(text) : l === 'warning' ? style.yellow(text) : text;
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
    ...e.warnings.map((w) => style.yellow(`warning: ${clean(w)}`)),
    ...(e.buildNote ? [`note: ${clean(e.buildNote)}`] : []),
  ];
  // The summary shows every level unless a stricter one was asked for.
  const summaryLevel = level === 'warning' ? 'info' : level;
  for (const s of d.summary)
    if (atLeast(s.level, summaryLevel))
      lines.push(`${paint(s.level, s.level.padEnd(7))} ${clean(s.message)}`);
  const shown = d.files.filter((f) => atLeast(f.level, level));
  if (!d.files.some((f) => f.level !== 'info')) lines.push('No problems found.');
  if (shown.length) lines.push('');
  for (const f of shown)
    lines.push(
      `${paint(f.level, f.level)} ${clean(f.path)}${f.line ? `:${f.line}` : ''} ${f.code}: ${clean(f.message)}`,
    );
  const hidden = d.files.length - shown.length;
  if (hidden) lines.push(`(${hidden} more at a lower level: --level info shows them)`);
  return lines.join('\n');
}
