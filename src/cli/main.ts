#!/usr/bin/env node
// The `backlog-search` command: the program is defined in program.ts, which tests import without running it.
const [flag, ...rest] = process.argv.slice(2);
/** CPU time (µs, every thread) a lookup spends before V8 may optimize (optimizeLater). */
const OPTIMIZE_AFTER_CPU_US = 1_000_000;
const LOOKUPS = ['search', 'get', 'list', 'diagnostics'];
const TAKES_VALUE = new Set(['-d', '--dir', '--workspace', '-e', '--embeddings', '--memory-budget']);
if ((flag === '--version' || flag === '-V') && rest.length === 0) {
  // The answer without loading the argument parser (issue #23: --version in Node's own start-up time).
  const { VERSION } = await import('../version.js');
  process.stdout.write(`${VERSION}\n`);
} else {
  if (isLookup(process.argv.slice(2)) && v8FlagsOurs()) await optimizeLater();
  const { main } = await import('./program.js');
  await main();
}

/**
 * A one-shot lookup (search, get, list, diagnostics) starts without V8's optimizing compiler: a process
 * this short never profits from the machine code it makes, and making it costs CPU and memory
 * (docs/performance.md, "Modules and process costs"). Switched on again (with the young generation's
 * growth) once the process has used a second of CPU, so a lookup that turns into long work (a first read of a large backlog, a model loading
 * for a hybrid answer) is compiled as usual from then on. CPU time, not a timer: on a loaded machine a
 * lookup's wall time is several times its CPU time.
 */
async function optimizeLater(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--no-turbofan');
  // The young generation stays at its first size (V8 doubles it as objects survive): a lookup's garbage
  // is collected in less memory touched for the first time (fewer page faults, the larger cost here).
  setFlagsFromString('--semi-space-growth-factor=1');
  const check = setInterval(() => {
    const { user, system } = process.cpuUsage();
    if (user + system < OPTIMIZE_AFTER_CPU_US) return;
    setFlagsFromString('--turbofan');
    setFlagsFromString('--semi-space-growth-factor=2'); // V8's default
    clearInterval(check);
  }, 50).unref();
}

/**
 * Only where it was measured (Node 20's V8, whose flags these are), and never over a choice of the user's
 * own: no compiler, tiering or heap flag given to node (its arguments, NODE_OPTIONS).
 */
function v8FlagsOurs(): boolean {
  if (process.versions.node.split('.')[0] !== '20') return false;
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
  return !/turbofan|\bopt\b|maglev|sparkplug|jitless|semi-space|max-old-space/.test(given);
}

/** The command is the first word that is neither an option nor a global option's value. */
function isLookup(args: string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    if (TAKES_VALUE.has(args[i])) i++;
    else if (!args[i].startsWith('-')) return LOOKUPS.includes(args[i]);
  }
  return false;
}
