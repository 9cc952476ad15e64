/**
 * @huggingface/transformers is an optional peer dependency (issue #23): a user's install has the bundled
 * model only. Here the compiled embeddings code runs beside a node_modules that has every package of this
 * checkout except @huggingface/*, as after `npm install -g backlog-search`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ROOT } from './helpers.js';

const run = promisify(execFile);
let base: string;
let model: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'bs-no-transformers-'));
  await mkdir(join(base, 'node_modules'));
  for (const name of await readdir(join(ROOT, 'node_modules')))
    if (name !== '@huggingface' && name !== '.bin')
      await symlink(join(ROOT, 'node_modules', name), join(base, 'node_modules', name));
  await writeFile(join(base, 'package.json'), JSON.stringify({ type: 'module' }));
  await run(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      join(ROOT, 'src', 'embeddings', 'index.ts'),
      join(ROOT, 'src', 'embeddings', 'worker.ts'),
      ...['--rootDir', join(ROOT, 'src'), '--outDir', join(base, 'dist')],
      ...['--module', 'nodenext', '--moduleResolution', 'nodenext', '--resolveJsonModule'],
      ...['--target', 'es2022', '--strict', '--skipLibCheck', '--esModuleInterop', '--types', 'node'],
    ],
    { cwd: ROOT },
  );
  // A model folder as the provider looks for it (the files are never read: the package is missing first).
  model = join(base, 'models', 'tiny');
  await mkdir(join(model, 'onnx'), { recursive: true });
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'])
    await writeFile(join(model, f), '{}');
}, 120_000);

afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

test('choosing a transformers model without the package: a NOT_FOUND error naming the install command; auto falls back to the bundled model', async () => {
  const script = join(base, 'run.mjs');
  await writeFile(
    script,
    `import { createTransformersEmbedder, resolveEmbedder, TRANSFORMERS_INSTALL } from './dist/embeddings/index.js';
const out = { install: TRANSFORMERS_INSTALL };
try { await createTransformersEmbedder({ model: ${JSON.stringify(model)} }); out.loaded = true; }
catch (err) { out.error = { name: err.name, code: err.code, message: err.message, hint: err.hint }; }
const auto = await resolveEmbedder('auto', { transformers: { model: ${JSON.stringify(model)} } });
out.auto = { provider: auto.provider, warnings: auto.warnings };
await auto.embedder?.close?.();
console.log(JSON.stringify(out));`,
  );
  const { stdout } = await run(process.execPath, [script], { cwd: base, timeout: 120_000 });
  const out = JSON.parse(stdout);
  expect(out.install).toContain('npm install -g @huggingface/transformers');
  expect(out.error).toMatchObject({ name: 'BacklogError', code: 'NOT_FOUND' });
  expect(out.error.hint).toContain(out.install);
  expect(out.auto.provider).toBe('bundled');
  expect(out.auto.warnings.join(' ')).toContain(out.install);
}, 120_000);
