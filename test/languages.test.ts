/**
 * Backlogs in other languages, through real files and the real index: Japanese and Korean fixtures
 * (test/fixtures/backlog-ja, backlog-ko, written for these tests), a mixed English and Chinese
 * backlog, per-file `lang`, the `languages` setting (library option and config.yml), the persisted
 * index, and the English-only semantic gate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { closeBacklog, openBacklog, type BacklogService } from '../src/index.js';
import { BacklogError } from '../src/errors.js';
import { ROOT, tempBacklog } from './helpers.js';

type Opts = Parameters<BacklogService['searchUnified']>[1];
const ids = async (service: BacklogService, query: string, options: Opts = {}) =>
  (await service.searchUnified(query, options)).results.map((r) => r.id);
const raw = (service: BacklogService, query: string, options: Opts = {}) =>
  ids(service, query, { match_mode: 'raw', ...options });

async function writeTask(dir: string, name: string, frontmatter: string, body: string): Promise<void> {
  await mkdir(join(dir, 'tasks'), { recursive: true });
  await writeFile(join(dir, 'tasks', name), `---\n${frontmatter}\n---\n${body}\n`);
}

describe('a Japanese backlog', () => {
  let service: BacklogService;
  let cleanup: () => Promise<void>;
  let dir: string;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-ja')));
    service = await openBacklog({ dir, embeddings: 'none' });
  });
  afterAll(async () => {
    await closeBacklog(service);
    await cleanup();
  });

  it('finds words inside sentences written without spaces', async () => {
    expect((await ids(service, '同期')).sort()).toEqual(['TASK-0001', 'TASK-0004']);
    expect((await ids(service, '文字化け'))[0]).toBe('TASK-0003');
    expect((await ids(service, 'インデックス 再構築'))[0]).toBe('TASK-0002');
    expect(await ids(service, 'スニペット')).toEqual(['mcp://backlog/resources/design-notes.md']);
  });

  it('matches a quoted phrase only where its words stand together', async () => {
    expect(await raw(service, '"同期処理"')).toEqual(['TASK-0001']);
    // TASK-0004 has 同期のキュー: the particle の is a stop-word, so 同期キュー is that phrase too,
    // but the words in the other order are not.
    expect(await raw(service, '"同期のキュー"')).toEqual(['TASK-0004']);
    expect(await raw(service, '"同期キュー"')).toEqual(['TASK-0004']);
    expect(await raw(service, '"キュー同期"')).toEqual([]);
  });

  it('searches one field, and a word of several terms there is a phrase', async () => {
    expect((await raw(service, 'title:同期')).sort()).toEqual(['TASK-0001', 'TASK-0004']);
    expect(await raw(service, 'title:同期処理')).toEqual(['TASK-0001']);
    expect(await raw(service, 'body:キャッシュ')).toEqual(['TASK-0002']);
    expect(await raw(service, 'title:キャッシュ')).toEqual([]);
  });

  it('combines words with filters', async () => {
    expect((await ids(service, '同期', { status: 'open' })).sort()).toEqual(['TASK-0001', 'TASK-0004']);
    expect(await ids(service, '同期', { status: 'done' })).toEqual([]);
    expect(await ids(service, 'メール', { status: 'done' })).toEqual(['TASK-0003']);
    expect(await ids(service, '同期', { tags: '認証' })).toEqual(['TASK-0001']);
    expect((await ids(service, '同期', { parent_id: 'EPIC-0001' })).sort()).toEqual([
      'TASK-0001',
      'TASK-0004',
    ]);
    expect(await raw(service, '同期 status:open -オフライン')).toEqual([]);
    expect(await raw(service, 'ログイン status:open')).toEqual(['TASK-0001']);
  });

  it('keeps ids and compounds whole inside Japanese text', async () => {
    const res = await ids(service, 'TASK-0001');
    expect(res[0]).toBe('TASK-0001');
    expect(res).toContain('TASK-0004'); // `TASK-0001を参照` in its body
    expect(await ids(service, 'FeatureStore')).toEqual(['TASK-0002']);
    expect(await ids(service, 'feature store')).toEqual(['TASK-0002']);
    expect(await ids(service, 'sync queue')).toEqual(['TASK-0004']);
  });

  it('snippets hold the matched word whole', async () => {
    const [hit] = (await service.searchUnified('セッション 更新', { limit: 1 })).results;
    expect(hit.id).toBe('TASK-0001');
    expect(hit.snippet?.text).toContain('セッションを更新');
  });
});

describe('a Korean backlog', () => {
  let service: BacklogService;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    let dir: string;
    ({ dir, cleanup } = await tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-ko')));
    service = await openBacklog({ dir, embeddings: 'none', cacheDir: false });
  });
  afterAll(async () => {
    await closeBacklog(service);
    await cleanup();
  });

  it('finds a word whatever particle or ending is written onto it', async () => {
    // 동기화 / 동기화를; 서버가 / 서버로; 수정 / 수정했습니다.
    expect((await ids(service, '동기화')).sort()).toEqual(['TASK-0001', 'TASK-0004']);
    expect((await ids(service, '서버')).sort()).toEqual(['TASK-0001', 'TASK-0004']);
    expect(await ids(service, '수정했습니다')).toEqual(['TASK-0001']);
    expect((await ids(service, '색인을'))[0]).toBe('TASK-0002');
  });

  it('phrases, fields and filters', async () => {
    expect(await raw(service, '"검색 색인"')).toEqual(['TASK-0002']);
    expect(await raw(service, '"색인 검색"')).toEqual([]);
    expect((await raw(service, 'title:동기화')).sort()).toEqual(['TASK-0001', 'TASK-0004']);
    expect(await raw(service, 'tags:동기화')).toEqual(['TASK-0004']);
    expect(await ids(service, '메일', { status: 'done' })).toEqual(['TASK-0003']);
    expect(await ids(service, '메일', { status: 'open' })).toEqual([]);
    expect(await ids(service, '동기화', { status: 'open', tags: '버그' })).toEqual(['TASK-0001']);
  });
});

describe('a backlog in English and Chinese', () => {
  let service: BacklogService;
  let cleanup: () => Promise<void>;
  let dir: string;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-ko')));
    await writeTask(
      dir,
      'TASK-0101.md',
      'id: TASK-0101\ntitle: Offline sync fails after login\nstatus: open',
      'The sync queue stops when the session expires.',
    );
    await writeTask(
      dir,
      'TASK-0102.md',
      'id: TASK-0102\ntitle: 离线同步在登录后失败\nstatus: open',
      '会话过期后同步队列停止。检查 FeatureStore 的缓存。',
    );
    await writeTask(
      dir,
      'TASK-0103.md',
      'id: TASK-0103\ntitle: 搜索结果排序\nstatus: done',
      '北京大学的用户报告排序问题。',
    );
    service = await openBacklog({ dir, embeddings: 'none', cacheDir: false });
  });
  afterAll(async () => {
    await closeBacklog(service);
    await cleanup();
  });

  it('each script finds its own documents, in one index', async () => {
    expect(await ids(service, '同步')).toEqual(['TASK-0102']);
    expect(await ids(service, 'syncing')).toEqual(['TASK-0101']);
    // The Korean fixture's TASK-0002 mentions FeatureStore too.
    expect((await ids(service, 'FeatureStore')).sort()).toEqual(['TASK-0002', 'TASK-0102']);
    expect((await ids(service, 'sync 同步')).sort()).toEqual(['TASK-0101', 'TASK-0102']);
    expect(await ids(service, '北京')).toEqual(['TASK-0103']);
  });

  it('a single Chinese character is not completed to the words it begins', async () => {
    expect(await ids(service, '登录')).toEqual(['TASK-0102']);
    expect(await ids(service, '登')).toEqual([]);
    // Two characters are: 队 alone is no word, 队列 is.
    expect(await ids(service, '队列')).toEqual(['TASK-0102']);
  });
});

describe('languages: per file, setting, detection, persisted', () => {
  it('a file that says `lang: de` is stemmed as German, and German query words reach it', async () => {
    const { dir, cleanup } = await tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-ko'));
    try {
      await writeTask(
        dir,
        'TASK-0201.md',
        'id: TASK-0201\ntitle: Häuser bauen\nlang: de',
        'Die Häuser werden gebaut.',
      );
      await writeTask(dir, 'TASK-0202.md', 'id: TASK-0202\ntitle: Build houses', 'Houses are being built.');
      const service = await openBacklog({ dir, embeddings: 'none', cacheDir: false });
      expect(await ids(service, 'Haus')).toEqual(['TASK-0201']);
      expect(await ids(service, 'house')).toEqual(['TASK-0202']);
      await closeBacklog(service);
    } finally {
      await cleanup();
    }
  });

  it('detects the language of each file in a backlog that mixes German and English', async () => {
    const { dir, cleanup } = await tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-ko'));
    try {
      await writeTask(
        dir,
        'TASK-0301.md',
        'id: TASK-0301\ntitle: Die Anmeldung schlägt fehl',
        'Nach dem Neustart des Servers können sich die Benutzer nicht mehr anmelden, weil die Sitzungen verloren gehen.',
      );
      await writeTask(
        dir,
        'TASK-0302.md',
        'id: TASK-0302\ntitle: The login fails',
        'After the server restarts, users can no longer sign in because their sessions are lost.',
      );
      const service = await openBacklog({ dir, embeddings: 'none', cacheDir: false });
      // A backlog this small is searchable before the detector answered; then indexed again.
      await service.index.languagesSettled();
      // German stemming: Sitzungen -> sitzung, and the query word `Sitzung` in German reaches it.
      expect(await ids(service, 'Sitzung')).toEqual(['TASK-0301']);
      expect(await ids(service, 'sessions')).toEqual(['TASK-0302']);
      await closeBacklog(service);
      // The same with the two languages named: every file is detected between them.
      const named = await openBacklog({ dir, embeddings: 'none', cacheDir: false, languages: ['en', 'de'] });
      expect(await ids(named, 'Sitzung')).toEqual(['TASK-0301']);
      expect(await ids(named, 'sessions')).toEqual(['TASK-0302']);
      await closeBacklog(named);
    } finally {
      await cleanup();
    }
  });

  it('the `languages` option and config.yml restrict the analysis; a bad value is an INVALID_FILTER', async () => {
    const { dir, cleanup } = await tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-ko'));
    try {
      await writeTask(
        dir,
        'TASK-0401.md',
        'id: TASK-0401\ntitle: Failures everywhere',
        'The failures of the sync.',
      );
      // Only Korean: English words are folded, not stemmed, and `the` is no stop-word.
      let service = await openBacklog({ dir, embeddings: 'none', cacheDir: false, languages: ['ko'] });
      expect(service.index.analyzer.queryTerms('The failures')).toEqual(['the', 'failures']);
      expect(await ids(service, 'the')).toEqual(['TASK-0401']);
      await closeBacklog(service);
      await writeFile(join(dir, 'config.yml'), 'project_name: "x"\nlanguages: [english, korean]\n');
      service = await openBacklog({ dir, embeddings: 'none', cacheDir: false });
      expect(service.index.analyzer.queryTerms('The failures')).toEqual(['failur']);
      expect(await ids(service, 'failure')).toEqual(['TASK-0401']);
      expect(await ids(service, 'the')).toEqual([]);
      await closeBacklog(service);
      await expect(openBacklog({ dir, embeddings: 'none', languages: ['klingon'] })).rejects.toBeInstanceOf(
        BacklogError,
      );
      await writeFile(join(dir, 'config.yml'), 'languages: [elvish]\n');
      await expect(openBacklog({ dir, embeddings: 'none' })).rejects.toMatchObject({
        code: 'INVALID_FILTER',
      });
    } finally {
      await cleanup();
    }
  });

  it('a restart from the persisted index keeps every document in its language', async () => {
    const { dir, cleanup } = await tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-ja'));
    try {
      await writeTask(dir, 'TASK-0501.md', 'id: TASK-0501\ntitle: Häuser\nlang: de', 'Die Häuser am See.');
      let service = await openBacklog({ dir, embeddings: 'none' });
      await closeBacklog(service);
      service = await openBacklog({ dir, embeddings: 'none' });
      expect(await ids(service, 'Haus')).toEqual(['TASK-0501']);
      expect(await raw(service, '"同期処理"')).toEqual(['TASK-0001']);
      const [hit] = (await service.searchUnified('文字化け', { limit: 1 })).results;
      expect(hit.snippet?.text).toContain('文字化け');
      await closeBacklog(service);
    } finally {
      await cleanup();
    }
  });
});
