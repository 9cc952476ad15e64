/**
 * Hostile files: backlogs made of binary `.md` files, invalid UTF-8, BOM + CRLF, a 50 MB markdown file,
 * a 100,000-line file, 20,000 tiny files, deep folders and odd names. Each is opened in a process of
 * its own (open-child.ts); counted: index time, peak RSS, files reported, files changed on disk.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEMO, ROOT, fmt, hashTree, seeded } from './common.js';

const WORDS =
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua sync board task'.split(
    ' ',
  );

function prose(rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++)
    out.push(WORDS[Math.floor(rand() * WORDS.length)] + (i % 17 === 16 ? '.\n' : ''));
  return out.join(' ');
}

type Scenario = { name: string; what: string; make: (dir: string) => Promise<void> };

function scenarios(quick: boolean): Scenario[] {
  const tiny = quick ? 2_000 : 20_000;
  const lines = quick ? 10_000 : 100_000;
  const bigMb = quick ? 10 : 50;
  return [
    {
      name: 'baseline',
      what: 'the demo backlog (37 tasks and epics, 8 documents)',
      make: async () => undefined,
    },
    {
      name: 'odd',
      what: '20 binary `.md` files (random bytes with NULs), 10 files of invalid UTF-8, 10 BOM + CRLF tasks, a folder 200 levels deep, 12 odd names (spaces, quotes, a newline, unicode, emoji, 250 bytes)',
      make: async (dir) => {
        const rand = seeded(7);
        for (let i = 0; i < 20; i++)
          await writeFile(join(dir, 'resources', `binary-${i}.md`), randomBytes(64 * 1024));
        for (let i = 0; i < 10; i++)
          await writeFile(
            join(dir, 'resources', `latin1-${i}.md`),
            Buffer.concat([
              Buffer.from('# Title \xff\xfe\n'),
              Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x90, 0x28, 0xbc]),
              Buffer.from(prose(rand, 200), 'latin1'),
            ]),
          );
        for (let i = 0; i < 10; i++)
          await writeFile(
            join(dir, 'tasks', `TASK-${900 + i}-crlf.md`),
            `\ufeff---\r\nid: TASK-${900 + i}\r\ntitle: CRLF task ${i}\r\nstatus: open\r\ncreated_at: 2026-01-01\r\n---\r\n${prose(rand, 80).replace(/\n/g, '\r\n')}\r\n`,
          );
        let deep = join(dir, 'resources');
        for (let i = 0; i < 200; i++) deep = join(deep, 'd');
        await mkdir(deep, { recursive: true });
        await writeFile(join(deep, 'deep.md'), `# Deep\n${prose(rand, 50)}`);
        const names = [
          'with space.md',
          `quote'"s.md`,
          'new\nline.md',
          'üñíçødé 日本語 русский.md',
          'emoji 🙂🚀.md',
          '-dash.md',
          '#hash%25&amp.md',
          '..dots..md',
          `${'x'.repeat(247)}.md`,
          'tab\tname.md',
          'back\\slash.md',
          ' leading space.md',
        ];
        for (const n of names) await writeFile(join(dir, 'resources', n), `# ${n}\n${prose(rand, 40)}`);
      },
    },
    {
      name: 'big',
      what: `one ${bigMb} MB markdown file`,
      make: async (dir) => {
        const chunk = prose(seeded(3), 200_000);
        const parts: string[] = ['# Big\n'];
        let size = 0;
        while (size < bigMb * 1024 * 1024) {
          parts.push(chunk);
          size += chunk.length;
        }
        await writeFile(join(dir, 'resources', 'big.md'), parts.join('\n'));
      },
    },
    {
      name: 'lines',
      what: `one file of ${fmt(lines)} lines`,
      make: async (dir) => {
        const rand = seeded(5);
        const out: string[] = ['# Many lines'];
        for (let i = 0; i < lines; i++) out.push(`- line ${i} ${WORDS[Math.floor(rand() * WORDS.length)]}`);
        await writeFile(join(dir, 'resources', 'lines.md'), out.join('\n'));
      },
    },
    {
      name: 'tiny',
      what: `${fmt(tiny)} tiny task files`,
      make: async (dir) => {
        const rand = seeded(11);
        await mkdir(join(dir, 'tasks', 'many'), { recursive: true });
        for (let i = 0; i < tiny; i++)
          await writeFile(
            join(dir, 'tasks', 'many', `TASK-${10_000 + i}.md`),
            `---\nid: TASK-${10_000 + i}\ntitle: Tiny ${i} ${WORDS[i % WORDS.length]}\ntype: task\nstatus: open\n---\n${prose(rand, 8)}\n`,
          );
      },
    },
  ];
}

export async function hostileFiles(
  quick: boolean,
): Promise<{ lines: string[]; changed: number; crashed: number }> {
  const rows: string[] = [];
  let changed = 0;
  let crashed = 0;
  for (const s of scenarios(quick)) {
    const base = await mkdtemp(join(tmpdir(), 'stress-files-'));
    const dir = join(base, 'backlog');
    await cp(DEMO, dir, { recursive: true });
    await s.make(dir);
    const before = await hashTree(dir);
    let result: {
      openMs: number;
      searchMaxMs: number;
      items: number;
      diagnostics: Record<string, number>;
      peakMb: number;
    } | null = null;
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'bench', 'stress', 'open-child.ts'), dir, join(base, 'cache')],
        { cwd: ROOT, maxBuffer: 1 << 24, timeout: 600_000 },
      );
      result = JSON.parse(stdout.trim().split('\n').pop()!);
    } catch (err) {
      crashed++;
      rows.push(`| ${s.what} | crashed: ${String(err).slice(0, 200)} | | | | |`);
    }
    const after = await hashTree(dir);
    let diff = 0;
    for (const [path, hash] of before) if (after.get(path) !== hash) diff++;
    for (const path of after.keys()) if (!before.has(path)) diff++;
    changed += diff;
    if (result) {
      const reported = Object.values(result.diagnostics).reduce((a, b) => a + b, 0);
      const codes =
        Object.entries(result.diagnostics)
          .map(([c, n]) => `${c} ${n}`)
          .join(', ') || '-';
      rows.push(
        `| ${s.what} | ${fmt(before.size)} | ${fmt(result.openMs)} ms | ${fmt(result.peakMb)} MB | ${fmt(reported)} (${codes}) | ${diff} |`,
      );
    }
    await rm(base, { recursive: true, force: true });
  }
  return {
    changed,
    crashed,
    lines: [
      'Each backlog is the demo backlog plus the hostile files, opened in a fresh process (`bench/stress/open-child.ts`: open with a persisted index in a temporary folder, six searches, a get of every item); sha256 of every file before and after (`.cache/` left out).',
      '',
      '| backlog | files | open (index) | peak RSS | files reported (diagnostics) | files changed on disk |',
      '|---|---|---|---|---|---|',
      ...rows,
    ],
  };
}
