// Preloaded with `node --import` by test/startup.test.ts: appends the URL of every module the process (and
// its worker threads) resolves to the file named by MODULE_LOG, one per line.
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (process.env.MODULE_LOG) appendFileSync(process.env.MODULE_LOG, resolved.url + '\\n');
  return resolved;
}`),
);
