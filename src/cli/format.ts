import type { BacklogService, GetEntry, ListResponse, SearchResponse } from '../service/backlog-service.js';

/** Human output: one line per hit, its snippet under it. */
export function formatSearch(res: SearchResponse): string {
  const lines = [
    `${res.total} result${res.total === 1 ? '' : 's'} for "${res.query}" (${res.search_mode}, ${res.took_ms} ms)`,
  ];
  for (const w of res.warnings ?? []) lines.push(`warning: ${w}`);
  for (const r of res.results) {
    const kind = r.status ? `${r.type}/${r.status}` : r.type;
    const score = r.score !== undefined ? `  ${r.score.toFixed(3)}` : '';
    lines.push(`${r.id}  [${kind}]  ${r.title}${score}`);
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

export function formatDiagnostics(d: ReturnType<BacklogService['diagnostics']>): string {
  const e = d.embeddings;
  const embed =
    e.provider === 'none'
      ? 'embeddings off'
      : `embeddings ${e.provider}, ${e.state} (${e.done}/${e.total} chunks)`;
  const lines = [
    `${d.items} items (${Object.entries(d.by_type)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}), search mode ${d.search_mode}, ${embed}`,
    ...e.warnings.map((w) => `warning: ${w}`),
    ...(e.buildNote ? [`note: ${e.buildNote}`] : []),
  ];
  if (d.files.length === 0) lines.push('No problems found.');
  const byCode = new Map<string, number>();
  for (const f of d.files) byCode.set(f.code, (byCode.get(f.code) ?? 0) + 1);
  if (byCode.size)
    lines.push(`${d.files.length} diagnostics: ${[...byCode].map(([c, n]) => `${c} ${n}`).join(', ')}`);
  for (const f of d.files)
    lines.push(`${f.level} ${f.path}${f.line ? `:${f.line}` : ''} ${f.code}: ${f.message}`);
  return lines.join('\n');
}
