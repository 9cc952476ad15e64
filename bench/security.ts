/**
 * What hostile inputs cost, before and after each budget (docs/security.md):
 * - a YAML alias bomb in front matter, and a file of distinct words, each loaded in a fresh process
 *   (peak RSS, time) next to the same backlog without it;
 * - a file of distinct words under the words budget, and with the budget lifted (as before it existed);
 * - `group_by` over 20,000 matches against the same search without it (medians of interleaved runs).
 *
 *   npm run bench:security
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { ROOT } from './common.js';

const DEMO = join(ROOT, 'demo', 'backlog');

interface Report {
  openMs: number;
  getMs: number;
  maxRssMb: number;
  codes: string[];
}

function load(dir: string, ref = '', limits?: object): Report {
  const out = execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'bench', 'open-and-report.ts'),
      dir,
      ref,
      limits ? JSON.stringify(limits) : '',
    ],
    { cwd: ROOT, env: { ...process.env, BACKLOG_EMBEDDINGS: 'none' }, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(out.toString());
}

const BOMB = [
  '---',
  ...'abcdefg'.split('').map((name, i) =>
    i === 0
      ? `a: &a [${Array(9).fill('"lol"').join(',')}]`
      : `${name}: &${name} [${Array(9)
          .fill(`*${'abcdefg'[i - 1]}`)
          .join(',')}]`,
  ),
  'title: Bomb',
  '---',
  'body',
  '',
].join('\n');

async function copyOfDemo(): Promise<{ dir: string; done: () => Promise<void> }> {
  const base = await mkdtemp(join(tmpdir(), 'bench-security-'));
  const dir = join(base, 'backlog');
  await cp(DEMO, dir, { recursive: true });
  return { dir, done: () => rm(base, { recursive: true, force: true }) };
}

const rows: string[] = [];
const row = (what: string, r: Report, base: Report) =>
  rows.push(
    `| ${what} | ${r.openMs.toFixed(0)} ms | ${r.maxRssMb.toFixed(0)} MB (+${(r.maxRssMb - base.maxRssMb).toFixed(0)}) | ${[...new Set(r.codes)].join(', ') || '-'} |`,
  );

{
  const { dir, done } = await copyOfDemo();
  const base = load(dir);
  row('the demo backlog (baseline)', base, base);
  await writeFile(join(dir, 'resources', 'bomb.md'), BOMB);
  row(`+ a ${Buffer.byteLength(BOMB)}-byte YAML alias bomb`, load(dir, 'resources/bomb.md'), base);
  await rm(join(dir, 'resources', 'bomb.md'));
  const words = Array.from({ length: 600_000 }, (_, i) => `w${i.toString(36)}x`).join(' ');
  await writeFile(join(dir, 'resources', 'words.md'), `# Words\n${words}\n`);
  const mb = (Buffer.byteLength(words) / 2 ** 20).toFixed(1);
  row(`+ a ${mb} MB file of 600,000 distinct words, words budget 50,000 (default)`, load(dir), base);
  row(
    `+ the same file, budget lifted (as before the budget)`,
    load(dir, '', { maxWordsPerFile: Number.MAX_SAFE_INTEGER }),
    base,
  );
  await done();
}

let groupLine = '';
{
  const base = await mkdtemp(join(tmpdir(), 'bench-group-'));
  await mkdir(join(base, 'resources'));
  for (let i = 0; i < 20_000; i += 500)
    await Promise.all(
      Array.from({ length: 500 }, (_, j) =>
        writeFile(join(base, 'resources', `n${i + j}.md`), `# Note ${i + j}\ncommonword ${i + j}\n`),
      ),
    );
  const service = await openBacklog({ dir: base, cacheDir: false, embeddings: 'none' });
  const time = async (group: boolean) => {
    const t = performance.now();
    await service.searchUnified('commonword', group ? { group_by: 'type' } : {});
    return performance.now() - t;
  };
  for (let i = 0; i < 5; i++) await Promise.all([time(false), time(true)]);
  const plain: number[] = [];
  const grouped: number[] = [];
  for (let i = 0; i < 21; i++) {
    plain.push(await time(false));
    grouped.push(await time(true));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  groupLine = `| 20,000 matches | ${median(plain).toFixed(1)} ms | ${median(grouped).toFixed(1)} ms | ${(median(grouped) / median(plain)).toFixed(2)}x |`;
  await closeBacklog(service);
  await rm(base, { recursive: true, force: true });
}

process.stdout.write(
  [
    '| backlog | open | peak RSS (vs baseline) | diagnostics |',
    '|---|---|---|---|',
    ...rows,
    '',
    '| search "commonword" | without group_by (p50) | with group_by: "type" (p50) | ratio |',
    '|---|---|---|---|',
    groupLine,
    '',
  ].join('\n'),
);
