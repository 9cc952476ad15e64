#!/usr/bin/env node
// The `backlog-search` command: the program is defined in program.ts, which tests import without running it.
import { main } from './program.js';

await main();
