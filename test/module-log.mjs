// Preloaded with `node --import` by test/startup.test.ts: appends the URL of every module the process (and
// its worker threads) resolves to the file named by MODULE_LOG, one per line: ES modules through a resolve
// hook, CommonJS ones required directly (require() of a package) through Module._resolveFilename.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

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

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const file = resolveFilename.apply(this, args);
  if (process.env.MODULE_LOG && file.startsWith('/'))
    appendFileSync(process.env.MODULE_LOG, pathToFileURL(file).href + '\n');
  return file;
};
