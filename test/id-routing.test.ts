import { describe, expect, it } from 'vitest';
import { IdRouter, type RoutableDocument } from '../src/search/id-routing.js';
import { pack, unpack } from '../src/search/packed.js';

const DOCS: RoutableDocument[] = (
  [
    ['BACK-72', 'Fix board view on Windows', 'completed/back-72 - fix.md'],
    ['BACK-4.9', 'Normalize task id inputs', 'completed/back-4.9 - x.md'],
    ['BACK-273.03', 'Build core search service', 'completed/back-273.03 - x.md'],
    ['BACK-100.6', 'Add CLI serve command', 'completed/back-100.6 - x.md'],
    ['DRAFT-7', 'Export milestones', 'drafts/draft-7 - x.md'],
    ['DRAFT-72', 'A draft with the same number', 'drafts/draft-72 - x.md'],
    ['m-7', 'Agent CLI workflow', 'milestones/m-7 - x.md'],
    ['doc-002', 'Configuring VIM', 'docs/doc-002 - x.md'],
    ['decision-1', 'Use Tailwind', 'decisions/decision-1 - x.md'],
    ['mcp://backlog/resources/adr/0116-crdt.md', 'Use CRDTs for note sync', 'resources/adr/0116-crdt.md'],
    ['mcp://backlog/resources/prompts.md', 'PROMPT 0002: Summarize a thread', 'resources/prompts.md'],
    ['mcp://backlog/resources/win.md', 'Windows 10 support', 'resources/win.md'],
  ] as const
).map(([id, title, path]) => ({ id, title, path }));

function router(): IdRouter {
  const r = new IdRouter();
  for (const doc of DOCS) r.add(doc);
  return r;
}

/** A router restored from the saved routes of DOCS (what a one-shot reads from the persisted index). */
function restored(): IdRouter {
  const r = new IdRouter();
  r.restoreRoutes(
    IdRouter.saveRoutes(DOCS),
    DOCS.map((d) => d.id),
  );
  return r;
}

const QUERIES = [
  'BACK-72',
  'back-72',
  'back 72',
  'BACK-072',
  '#BACK-72',
  'decision 1',
  'doc-2',
  '72',
  '273.03',
  '273.3',
  '2024',
  'task 100.6',
  'TASK-4.9',
  'task-273.03',
  'draft 72',
  'milestone m-7',
  'milestone 7',
  'doc 2',
  'ADR 0116',
  'adr-116',
  'PROMPT 0002',
  'covid 19',
  'windows 10',
  '7',
  'm-7',
  'resources/prompts.md',
];

describe('IdRouter', () => {
  it('resolves an id in any spelling', () => {
    const r = router();
    for (const q of ['BACK-72', 'back-72', 'back 72', 'BACK-072', '#BACK-72'])
      expect(r.resolve(q), q).toBe('BACK-72');
    expect(r.resolve('decision 1')).toBe('decision-1');
    expect(r.resolve('doc-2')).toBe('doc-002');
  });

  it('reads a bare number as the task with that number, under the most common prefix', () => {
    const r = router();
    expect(r.resolve('72')).toBe('BACK-72');
    expect(r.resolve('273.03')).toBe('BACK-273.03');
    expect(r.resolve('273.3')).toBe('BACK-273.03');
    expect(r.resolve('2024')).toBeUndefined();
  });

  it('reads a kind word and a number as that number under the kind, else under the backlog prefix', () => {
    const r = router();
    expect(r.resolve('task 100.6')).toBe('BACK-100.6');
    expect(r.resolve('TASK-4.9')).toBe('BACK-4.9');
    expect(r.resolve('task-273.03')).toBe('BACK-273.03');
    expect(r.resolve('draft 72')).toBe('DRAFT-72');
    expect(r.resolve('milestone m-7')).toBe('m-7');
    expect(r.resolve('milestone 7')).toBe('m-7');
    expect(r.resolve('doc 2')).toBe('doc-002');
  });

  it('routes a PREFIX NNNN that opens a title or names a file in a folder of that name', () => {
    const r = router();
    expect(r.resolve('ADR 0116')).toBe('mcp://backlog/resources/adr/0116-crdt.md');
    expect(r.resolve('adr-116')).toBe('mcp://backlog/resources/adr/0116-crdt.md');
    expect(r.resolve('PROMPT 0002')).toBe('mcp://backlog/resources/prompts.md');
    // A word and a number are not an id: "covid 19", "Windows 10".
    expect(r.resolve('covid 19')).toBeUndefined();
    expect(r.resolve('windows 10')).toBeUndefined();
  });

  it('forgets removed documents, and a real id wins over an alias with the same key', () => {
    const r = router();
    r.remove('BACK-72');
    expect(r.resolve('72')).toBe('DRAFT-72');
    r.add({ id: 'ADR-116', title: 'The real ADR-116' });
    expect(r.resolve('ADR 0116')).toBe('ADR-116');
  });

  it('answers from saved routes as from the documents routed one by one, and after a change too', () => {
    const saved = restored();
    const live = router();
    for (const q of QUERIES) expect(saved.resolve(q), q).toBe(live.resolve(q));
    // A change makes the maps from the saved routes first: both routers stay the same.
    for (const r of [saved, live]) {
      r.remove('BACK-72');
      r.add({ id: 'ADR-116', title: 'The real ADR-116' });
    }
    for (const q of QUERIES) expect(saved.resolve(q), q).toBe(live.resolve(q));
    expect(saved.resolve('72')).toBe('DRAFT-72');
    expect(saved.resolve('ADR 0116')).toBe('ADR-116');
  });

  it('refuses saved routes that are malformed, and clear() drops them', () => {
    const ids = DOCS.map((d) => d.id);
    const bytes = IdRouter.saveRoutes(DOCS);
    const value = unpack(bytes) as Record<string, unknown>;
    const broken: Record<string, unknown>[] = [
      { ...value, idKeys: [...(value.idKeys as string[])].reverse() },
      { ...value, idAt: new Uint8Array(3) },
      { ...value, idAt: Uint32Array.from(value.idAt as Uint8Array, () => ids.length) },
      { ...value, numberEnds: new Uint32Array((value.numbers as string[]).length) },
      { ...value, aliasKeys: 7 },
      { ...value, prefixes: [['back', 'x']] },
    ];
    for (const b of broken) expect(() => new IdRouter().restoreRoutes(pack(b), ids)).toThrow(/malformed/);
    expect(() => new IdRouter().restoreRoutes(new Uint8Array([1, 2]), ids)).toThrow();
    // Positions past a shorter id column are refused too.
    expect(() => new IdRouter().restoreRoutes(bytes, ids.slice(0, 3))).toThrow(/malformed/);
    const r = restored();
    r.clear();
    expect(r.resolve('BACK-72')).toBeUndefined();
  });
});
