/**
 * The tree of a backlog whose parent ids have several files (#25): a sub-task hangs under the copy of its
 * parent in its own state, moves there when that copy arrives later, and leaves its old parent's children.
 */
import { describe, expect, it } from 'vitest';
import { ItemStore, updatedMsOf, type FilterableItem } from '../src/service/item-store.js';
import type { BacklogItem, TaskState } from '../src/storage/types.js';

function task(id: string, state: TaskState, parent_id: string | null = null): BacklogItem {
  const path = `${state === 'active' ? 'tasks' : state}/${id.toLowerCase()}.md`;
  return {
    id,
    type: 'task',
    state,
    title: id,
    status: 'To Do',
    parent_id,
    tags: [],
    author: null,
    assignee: null,
    priority: null,
    references: [],
    created_at: null,
    updated_at: null,
    body: '',
    path,
    folder: path.split('/')[0],
    file_type: 'md',
    size: 0,
    mtime_ms: 0,
    frontmatter: {},
  };
}

describe('parents across duplicate ids', () => {
  it('moves an archived sub-task to the archived copy of its parent when that copy arrives', () => {
    const store = new ItemStore(() => 'BACK');
    store.put(task('BACK-76', 'completed'));
    store.put(task('BACK-76.1', 'archived', 'task-76')); // an older prefix names the same number
    expect(store.children('BACK-76')).toEqual(['BACK-76.1']);
    store.put(task('BACK-76@archived', 'archived'));
    expect(store.children('BACK-76@archived')).toEqual(['BACK-76.1']);
    expect(store.children('BACK-76')).toEqual([]);
    store.remove('BACK-76.1');
    expect(store.children('BACK-76@archived')).toEqual([]);
  });

  it("an active sub-task's parent is the owner of the id, never a renamed active duplicate", () => {
    const store = new ItemStore(() => 'BACK');
    store.put(task('BACK-5', 'active'));
    store.put(task('BACK-5@active', 'active'));
    store.put(task('BACK-5.1', 'active', 'BACK-5'));
    expect(store.children('BACK-5')).toEqual(['BACK-5.1']);
    expect(store.children('BACK-5@active')).toEqual([]);
  });

  it('only a task- prefix is read as an older spelling of the task prefix', () => {
    const store = new ItemStore(() => 'BACK');
    store.put(task('BACK-3', 'active'));
    store.put(task('BACK-9', 'active', 'doc-3'));
    expect(store.children('BACK-3')).toEqual([]);
  });
});

describe('items read when first asked for (replaceLater: a one-shot reads what it shows)', () => {
  it('answers lookups from the columns, decodes each item once when asked, and everything before a change', () => {
    const items = [
      task('BACK-1', 'active'),
      { ...task('BACK-2', 'active', 'BACK-1'), status: 'in progress' },
      task('BACK-2@archived', 'archived'),
      { ...task('BACK-3', 'completed', 'BACK-1'), status: 'In Progress' },
      { ...task('BACK-5', 'active'), status: null },
    ];
    const eager = new ItemStore(() => 'BACK');
    eager.replaceAll(items.map((i) => ({ ...i })));
    const read: number[] = [];
    const lazy = new ItemStore(() => 'BACK');
    lazy.replaceLater({
      ids: items.map((i) => i.id),
      paths: items.map((i) => i.path),
      statuses: items.map((i) => i.status),
      states: items.map((i) => i.state),
      updated: items.map(updatedMsOf),
      item: (i) => {
        read.push(i);
        return { ...items[i] };
      },
    });
    expect(lazy.size).toBe(5);
    expect(lazy.ids()).toEqual(eager.ids());
    for (const ref of [
      'back 2',
      'BACK-2@archived',
      'archived/back-2@archived.md',
      'mcp://backlog/BACK-3',
      'x',
    ])
      expect(lazy.resolve(ref), ref).toBe(eager.resolve(ref));
    expect(lazy.atPath('completed/back-3.md')).toBe('BACK-3');
    expect(lazy.statusVocabulary(['Done'])).toEqual(eager.statusVocabulary(['Done']));
    // list's reading: state, status and date from the columns, the same as the items give them.
    const columns = (x: FilterableItem) => [
      x.state,
      x.status,
      x.updatedMs,
      x.keyOf('state'),
      x.keyOf('path'),
    ];
    expect(lazy.filterable().map(columns)).toEqual(eager.filterable().map(columns));
    expect(read).toEqual([]);
    expect(lazy.byId('BACK-3')).toEqual(eager.byId('BACK-3'));
    expect(lazy.byId('BACK-3')).toBe(lazy.byId('BACK-3'));
    expect(lazy.toSearchDocument(lazy.byId('BACK-3')!)).toEqual(
      eager.toSearchDocument(eager.byId('BACK-3')!),
    );
    // BACK-3 and its parent (its ancestors), once each.
    expect(read).toEqual([3, 0]);
    expect(lazy.indexedTime('BACK-3')).toBeTypeOf('number');
    expect(lazy.indexedTime('BACK-9')).toBeUndefined();
    // The tree needs every item: all read, the rest once.
    expect(lazy.children('BACK-1')).toEqual(eager.children('BACK-1'));
    expect(read.sort()).toEqual([0, 1, 2, 3, 4]);
    expect([...lazy.values()]).toEqual([...eager.values()]);
    expect(lazy.statusVocabulary([])).toEqual(eager.statusVocabulary([]));
    lazy.put(task('BACK-4', 'active', 'BACK-3'));
    expect(lazy.children('BACK-3')).toEqual(['BACK-4']);
    expect(lazy.size).toBe(6);
  });
});
