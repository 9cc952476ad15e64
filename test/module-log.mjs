// Preloaded with `node --import` by test/startup.test.ts: appends the URL of every module the process (and
// its worker threads) resolves to the file named by MODULE_LOG, one per line: ES modules through a resolve
// hook, CommonJS ones required directly (require() of a package) through Module._resolveFilename, and the
// bundle's chunks, which its loader (src/cli/chunk-loader.ts) compiles with vm.Script, through a subclass
// of it (synced into the ES module view of node:vm that the loader imports).
import { appendFileSync } from 'node:fs';
import Module, { register, syncBuiltinESMExports } from 'node:module';
import vm from 'node:vm';
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

const Script = vm.Script;
vm.Script = class extends Script {
  constructor(code, options) {
    super(code, options);
    if (process.env.MODULE_LOG && options?.filename?.startsWith('/'))
      appendFileSync(process.env.MODULE_LOG, pathToFileURL(options.filename).href + '\n');
  }
};
syncBuiltinESMExports();
