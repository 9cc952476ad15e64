// Preloaded with `node --allow-natives-syntax --import` by test/startup.test.ts: at exit, warms a function
// up, asks V8 to optimize it and writes to the file named by OPT_PROBE whether V8 optimized it, and the process's CPU time (µs).
import { writeFileSync } from 'node:fs';
import process from 'node:process';

const status = new Function('f', 'return %GetOptimizationStatus(f)');
process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  const hot = (x) => (x * 31) ^ (x >>> 3);
  new Function('f', '%PrepareFunctionForOptimization(f)')(hot);
  hot(1);
  hot(2);
  new Function('f', '%OptimizeFunctionOnNextCall(f)')(hot);
  hot(3);
  // Bit 4: optimized (V8's OptimizationStatus::kOptimized).
  const optimized = (status(hot) & (1 << 4)) !== 0;
  writeFileSync(process.env.OPT_PROBE, JSON.stringify({ optimized, cpuUs: user + system }));
});
