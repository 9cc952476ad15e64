import { fileURLToPath } from 'node:url';

/** The demo backlog shipped with the package (`demo/backlog`), served when no backlog folder exists. */
export const DEMO_BACKLOG_DIR = fileURLToPath(new URL('../../demo/backlog', import.meta.url));

/** Derived data of the demo backlog: the package's own `.cache/` (git-ignored), not the shipped folder. */
export const DEMO_CACHE_DIR = fileURLToPath(new URL('../../.cache/demo', import.meta.url));
