/**
 * Docs match the code (issue #13): every `--flag` and every `backlog_*` tool named in README.md and docs/
 * exists: the flags in the CLI's parser (or in the sources of bench/, or in a short list of other programs' flags the docs quote,
 * each with its owner), the tools in the MCP server's tools/list.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Command } from 'commander';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram } from '../src/cli/program.js';
import { createMcpServer } from '../src/mcp/server.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { DEMO_DIR, ROOT, tempBacklog } from './helpers.js';
import { BEGIN, END, qualityLine, readQuality, withQualityLine } from '../bench/readme-numbers.js';

/** Flags of other programs that the docs quote, by owner. */
const OTHER_PROGRAMS: Record<string, string[]> = {
  npm: ['--prefix', '--no-audit', '--no-fund', '--dry-run', '--silent', '--global', '--no-save'],
  node: [
    '--expose-gc',
    '--max-old-space-size',
    '--max-semi-space-size',
    '--min-semi-space-size',
    '--import',
    '--require',
    '--trace-gc',
    '--trace-gc-nvp',
    '--trace-incremental-marking',
    '--cpu-prof',
    '--cpu-prof-interval',
    '--input-type',
    // V8 flags tried for a one-shot lookup (docs/ablation.md; src/cli/main.ts sets the first three).
    '--no-turbofan',
    '--no-opt',
    '--opt',
    '--semi-space-growth-factor',
    '--max-lazy',
    '--single-threaded-gc',
    '--single-threaded',
    '--no-sparkplug',
    // WebAssembly flags tried for the bundled model's first run (docs/performance.md, branch hybrid2).
    '--no-liftoff',
    '--no-wasm-dynamic-tiering',
  ],
  prettier: ['--check'],
  'claude mcp add': ['--transport', '--scope', '--header'],
  'backlog (Backlog.md CLI)': ['--draft'],
  chromium: ['--headless', '--no-sandbox', '--disable-gpu'],
  git: ['--depth', '--detach'],
  'valgrind --tool=callgrind': ['--tool', '--separate-threads', '--callgrind-out-file'],
  // docs/devset.md quotes it as the text of a query about another project's flag.
  'a dev-set query': ['--append-plan'],
  // Scripts retired from bench/ whose commands the docs keep with their figures (docs/ablation.md:
  // "removed after <commit>"); flags the kept scripts also read need no entry.
  'bench/mcp-exit.ts (removed after c5d9f3f)': ['--delay'],
  'bench/build-stalls.ts (removed after 32c034c)': ['--seconds', '--src'],
  'bench/cache-save.ts (removed after 32c034c)': ['--base-ref', '--encoding'],
};

/** Flags the scripts in bench/ read: every `--name` their TypeScript sources spell. */
function benchFlags(dir = join(ROOT, 'bench'), into = new Set<string>()): Set<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) benchFlags(path, into);
    else if (e.name.endsWith('.ts'))
      for (const m of readFileSync(path, 'utf8').matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)) into.add(m[0]);
  }
  return into;
}

/** Every long flag a command (and its subcommands) defines, with the `--no-` forms commander adds. */
function cliFlags(cmd: Command, into = new Set<string>()): Set<string> {
  for (const o of cmd.options) if (o.long) into.add(o.long);
  into.add('--help');
  for (const sub of cmd.commands) cliFlags(sub, into);
  return into;
}

/** Markdown files of the docs: README.md and docs/*.md. */
function docs(): { name: string; text: string }[] {
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return files.map((name) => ({ name, text: readFileSync(join(ROOT, name), 'utf8') }));
}

/** `--flags` the text names: in code spans and code blocks only (prose dashes are not flags). */
export function flagsIn(markdown: string): string[] {
  const code = [...markdown.matchAll(/```[\s\S]*?```|`[^`\n]+`|^( {4}|\t).*$/gm)].map((m) => m[0]);
  return [...new Set(code.flatMap((c) => [...c.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((m) => m[0])))];
}

export function toolsIn(markdown: string): string[] {
  return [...new Set([...markdown.matchAll(/\bbacklog_[a-z_]+\b/g)].map((m) => m[0]))];
}

describe('docs check', () => {
  it('finds flags and tools in markdown, so a wrong name can fail the check', () => {
    const md =
      'Run `backlog-search list --sortt id` or\n\n```sh\nbacklog-search search x --bogus\n```\nthen call backlog_serch.';
    expect(flagsIn(md)).toEqual(['--sortt', '--bogus']);
    expect(toolsIn(md)).toEqual(['backlog_serch']);
    const known = cliFlags(buildProgram());
    expect(flagsIn(md).filter((f) => !known.has(f))).toEqual(['--sortt', '--bogus']);
  });

  it('every --flag in README.md and docs/ is one of the CLI or of a program the docs quote', () => {
    const known = cliFlags(buildProgram(), benchFlags());
    for (const flags of Object.values(OTHER_PROGRAMS)) for (const f of flags) known.add(f);
    const unknown = docs().flatMap(({ name, text }) =>
      flagsIn(text)
        .filter((f) => !known.has(f))
        .map((f) => `${name}: ${f}`),
    );
    expect(unknown).toEqual([]);
  });

  it('every backlog_* tool in README.md and docs/ is in the MCP server tools/list', async () => {
    // A copy: the built-in demo itself is served read-only, without the write tools.
    const copy = await tempBacklog(DEMO_DIR);
    const service = await openBacklog({ dir: copy.dir, embeddings: 'none', watch: false });
    try {
      const server = createMcpServer(service);
      const [a, b] = InMemoryTransport.createLinkedPair();
      await server.connect(a);
      const client = new Client({ name: 'docs-check', version: '1.0.0' });
      await client.connect(b);
      const listed = new Set((await client.listTools()).tools.map((t) => t.name));
      await client.close();
      expect(listed.size).toBeGreaterThan(4);
      const unknown = docs().flatMap(({ name, text }) =>
        toolsIn(text)
          .filter((t) => !listed.has(t))
          .map((t) => `${name}: ${t}`),
      );
      expect(unknown).toEqual([]);
    } finally {
      await closeBacklog(service);
      await copy.cleanup();
    }
  });
});

describe('the README quotes the last evaluation', () => {
  it('its quality line is the one generated from docs/quality.json (npm run eval writes both)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const quality = readQuality(ROOT);
    expect(readme).toContain(`${BEGIN}\n${qualityLine(quality)}\n${END}`);
    expect(withQualityLine(readme, quality)).toBe(readme);
    // Each number in it is one of the JSON's.
    const line = qualityLine(quality);
    const sci = quality.results.find((r) => r.dataset === 'scifact' && r.system === 'backlog-search (bm25)');
    if (sci) expect(line).toContain(sci.report.ndcg_at_10.toFixed(4));
  });
});
