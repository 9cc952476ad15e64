/**
 * The `backlog-search` command as users run it (issue #23): the compiled CLI (dist/cli/main.js) and what
 * it imports, bundled by esbuild into dist/bin/, so that a command reads a few files instead of ~230
 * (zod alone is 95, the MCP SDK ~420 with its dependencies). Dynamic imports stay chunks of their own:
 * a command still loads only what it uses (test/startup.test.ts checks both builds).
 *
 * dist/bin/ is as deep as dist/cli/, so paths made from `import.meta.url` (the demo backlog, the
 * viewer's files) still point to the same places. Two modules are adjusted: version.js (its
 * package.json is one level up from dist/, not from dist/bin/) gets the version as a literal, and the
 * embedding worker is started from dist/embeddings/worker.js (it runs in a thread of its own). js-yaml's
 * `!!js/function` type is replaced by one that never matches (it would load esprima), zod's locales
 * by English alone, and commander's node:child_process is loaded when first used.
 * Left out, loaded from node_modules as before: the embedding runtimes (native code, model files found
 * next to their package) and eld (its file is located through the module paths).
 *
 * Then each chunk becomes a CommonJS file (dist/bin/*.cjs) that src/cli/chunk-loader.ts compiles with a V8
 * code cache (Node 20 has none for ES modules): its dynamic imports call the loader (chunks) or the
 * entry's import() (the rest), import.meta comes from the loader. The entry stays an ES module: main.js
 * with the loader, and the bundle's hash (the cache's key). docs/performance.md, "A V8 code cache".
 *
 *   node scripts/bundle-cli.mjs [--dist <dir>]   (default: dist/ of this checkout; run after tsc)
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { build, transform } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { dist: { type: 'string' } } });
const dist = resolve(values.dist ?? join(root, 'dist'));
const outdir = join(dist, 'bin');
/** The MCP SDK parts replaced by stubs below, by the ones the build met: an SDK that moved them fails the build. */
const stubbed = new Set();
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The two modules whose paths depend on where the file is. */
const relocate = {
  name: 'relocate',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]version\.js$/ }, () => ({
      contents: `export const VERSION = ${JSON.stringify(version)};\n`,
      loader: 'js',
    }));
    // js-yaml 3 (gray-matter's) loads esprima, 30 ms of a start, for a `!!js/function` tag that must never
    // run anyway: front matter is parsed by our own safe engine, and js-yaml only writes it.
    b.onLoad({ filter: /[\\/]js-yaml[\\/]lib[\\/]js-yaml[\\/]type[\\/]js[\\/]function\.js$/ }, () => ({
      contents:
        "var Type = require('../../type');\nmodule.exports = new Type('tag:yaml.org,2002:js/function', { kind: 'scalar', resolve: function () { return false; } });\n",
      loader: 'js',
    }));
    // zod's 40 locales (600 KB of the 750 KB zod brings) are kept by its namespace export though only
    // English (zod's default, set from en.js directly) is ever used: each start would parse them.
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: 'js',
    }));
    // commander requires node:child_process (with net and dgram, ~9 ms of every start) for executable
    // subcommands, which this program has none of: loaded if ever used.
    b.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, ({ path }) => {
      const code = readFileSync(path, 'utf8');
      const from = "const childProcess = require('node:child_process');";
      if (!code.includes(from)) throw new Error(`commander: ${from} not found`);
      const lazy =
        "const childProcess = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });";
      return { contents: code.replace(from, lazy), loader: 'js' };
    });
    // The MCP SDK's server loads ajv and ajv-formats (~20 ms of a start) to validate elicitation answers, and
    // zod-to-json-schema (with zod 3) to advertise zod 3 schemas: this server never elicits, and advertises
    // its tools itself from zod 4 schemas (src/mcp/tool.ts). Each is replaced by a stub that says so if used.
    b.onLoad(
      { filter: /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/]validation[\\/]ajv-provider\.js$/ },
      () => (
        stubbed.add('ajv-provider'),
        {
          contents:
            "export class AjvJsonSchemaValidator { getValidator() { throw new Error('JSON Schema validation is not in the backlog-search bundle (scripts/bundle-cli.mjs)'); } }\n",
          loader: 'js',
        }
      ),
    );
    // zod 3 itself, which the SDK's zod-compat.js reaches only for shapes made of zod 3 schemas (ours are zod 4).
    b.onResolve({ filter: /^zod\/v3$/ }, ({ importer }) =>
      /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/]server[\\/]zod-compat\.js$/.test(importer)
        ? { path: 'zod-v3-stub', namespace: 'stub' }
        : undefined,
    );
    b.onLoad(
      { filter: /^zod-v3-stub$/, namespace: 'stub' },
      () => (
        stubbed.add('zod/v3'),
        {
          contents:
            "export function object() { throw new Error('zod 3 is not in the backlog-search bundle (scripts/bundle-cli.mjs)'); }\n",
          loader: 'js',
        }
      ),
    );
    b.onLoad(
      { filter: /[\\/]zod-to-json-schema[\\/]dist[\\/]esm[\\/]index\.js$/ },
      () => (
        stubbed.add('zod-to-json-schema'),
        {
          contents:
            "export function zodToJsonSchema() { throw new Error('zod-to-json-schema is not in the backlog-search bundle (scripts/bundle-cli.mjs)'); }\n",
          loader: 'js',
        }
      ),
    );
    b.onLoad({ filter: /[\\/]dist[\\/]embeddings[\\/]pool-slots\.js$/ }, ({ path }) => {
      const code = readFileSync(path, 'utf8');
      const from = "new URL('./worker.js', here)";
      if (!code.includes(from)) throw new Error(`pool-slots.js: ${from} not found`);
      return { contents: code.replace(from, "new URL('../embeddings/worker.js', here)"), loader: 'js' };
    });
  },
};

await rm(outdir, { recursive: true, force: true });
const { outputFiles, metafile } = await build({
  entryPoints: { 'backlog-search': join(dist, 'cli', 'main.js') },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: '[name]-[hash]',
  external: ['@huggingface/*', 'onnxruntime-*', '@energetic-ai/*', 'eld', 'eld/*', 'fsevents'],
  plugins: [relocate],
  logLevel: 'warning',
  legalComments: 'none',
  write: false,
  metafile: true,
});
const missed = ['ajv-provider', 'zod/v3', 'zod-to-json-schema'].filter((name) => !stubbed.has(name));
if (missed.length > 0)
  throw new Error(`the MCP SDK no longer loads ${missed.join(', ')} where this script stubs it: look again`);

/** The chunks as CommonJS (chunk-loader.ts compiles them with a code cache), the entry as an ES module. */
await mkdir(outdir, { recursive: true });
const ENTRY = join(outdir, 'backlog-search.js');
const bundleId = createHash('sha256');
const chunks = [];
for (const out of outputFiles) {
  const name = basename(out.path);
  let code = ascii(name, out.text);
  // Dynamic imports go through the loader (chunks) or the entry's import() (the rest, node_modules and
  // Node's own, resolved from the same folder): each one esbuild recorded must be found.
  const imports = metafile.outputs[relative(process.cwd(), out.path)].imports;
  const dynamic = imports.filter((i) => i.kind === 'dynamic-import');
  let found = 0;
  code = code.replace(/\bimport\(("[^"\\]+")\)/g, (_, spec) => {
    found++;
    return `${JSON.parse(spec).startsWith('./') ? '__bsLoad' : '__bsImport'}(${spec})`;
  });
  if (found !== dynamic.length)
    throw new Error(`${name}: ${found} dynamic imports rewritten, esbuild made ${dynamic.length}`);
  if (out.path === ENTRY) {
    chunks.push({ name, code: code.replace(/^#!.*\n/, '') });
    continue;
  }
  const cjs = await transform(code, {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    define: {
      'import.meta.url': '__bsUrl',
      'import.meta.resolve': '__bsResolve',
      'import.meta.dirname': '__dirname',
      'import.meta.filename': '__filename',
    },
    logLevel: 'silent',
  });
  if (cjs.warnings.length > 0) throw new Error(`${name}: ${cjs.warnings.map((w) => w.text).join('; ')}`);
  // An ES module is strict code; so stays its CommonJS form.
  chunks.push({ name: name.replace(/\.js$/, '.cjs'), code: `"use strict";\n${cjs.code}` });
}
for (const { name, code } of chunks) bundleId.update(name).update(code);
for (const { name, code } of chunks) {
  if (name === 'backlog-search.js') {
    // The entry: main.js with the loader in front of it.
    const entry = await build({
      stdin: {
        contents: `import { loadChunk as __bsLoad, importFromBin as __bsImport } from ${JSON.stringify(join(dist, 'cli', 'chunk-loader.js'))};\n${code}`,
        resolveDir: outdir,
        sourcefile: 'backlog-search.js',
      },
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      define: { __BS_BUNDLE_ID: JSON.stringify(bundleId.digest('hex').slice(0, 16)) },
      banner: { js: '#!/usr/bin/env node' },
      logLevel: 'warning',
      legalComments: 'none',
      write: false,
    });
    await writeFile(ENTRY, ascii(name, entry.outputFiles[0].text), { mode: 0o755 });
  } else await writeFile(join(outdir, name), code);
}

/**
 * esbuild escapes strings but leaves comments and regular expression literals as written: one em dash in
 * a comment makes V8 hold and scan a whole chunk as a two-byte string (decoding the 800 KB chunk took
 * 15 ms instead of 5), and the loader reads chunks as latin1. \uXXXX means the same character in a comment
 * and in a regular expression; in a template literal it would change String.raw, so a line with a
 * backquote stops the build instead.
 */
function ascii(name, code) {
  if (!/[\u0080-\uffff]/.test(code)) return code;
  const raw = code
    .split('\n')
    .findIndex(
      (line) => /[\u0080-\uffff]/.test(line) && line.includes('`') && !/^\s*(\*|\/\/|\/\*)/.test(line),
    );
  if (raw >= 0)
    throw new Error(`${name}:${raw + 1}: a non-ASCII character on a line with a template literal`);
  return code.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
