import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests that exercise embeddings ask for a provider themselves; the rest stay lexical and light.
    // A CLI search never asks a `serve` another test started (test/ask-server.test.ts turns it on).
    env: { BACKLOG_EMBEDDINGS: 'none', BACKLOG_NO_SERVER: '1' },
  },
});
