import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** The viewer: built into dist/viewer and served by `backlog-search serve` at `/`. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: 'public',
  // Preact's automatic JSX runtime (also set in viewer/tsconfig.json for type checking).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/viewer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 200,
  },
  server: {
    // `npm run dev:viewer` proxies the API to a running `backlog-search serve` (port 3030).
    proxy: Object.fromEntries(
      ['/search', '/tasks', '/resources', '/events', '/health', '/projects'].map((p) => [
        p,
        'http://127.0.0.1:3030',
      ]),
    ),
  },
});
