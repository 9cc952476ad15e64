#!/usr/bin/env node
// The `backlog-search` command: the program is defined in program.ts, which tests import without running it.
const [flag, ...rest] = process.argv.slice(2);
if ((flag === '--version' || flag === '-V') && rest.length === 0) {
  // The answer without loading the argument parser (issue #23: --version in Node's own start-up time).
  const { VERSION } = await import('../version.js');
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await import('./program.js');
  await main();
}
