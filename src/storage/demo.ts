import { fileURLToPath } from 'node:url';

/** The demo backlog shipped with the package (`demo/backlog`), served when no backlog folder exists. */
export const DEMO_BACKLOG_DIR = fileURLToPath(new URL('../../demo/backlog', import.meta.url));
