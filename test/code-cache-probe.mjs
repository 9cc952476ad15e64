// Preloaded with `node --import` by test/code-cache.test.ts: appends one JSON line per script the bundle's
// loader (src/cli/chunk-loader.ts) compiles to the file named by CODE_CACHE_LOG: the chunk, whether cached
// data was given, and whether V8 rejected it. vm.Script is replaced by a subclass that records this, and
// the ES module view of node:vm is synced so that the loader's `import { Script }` gets it.
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { basename } from 'node:path';
import process from 'node:process';
import vm from 'node:vm';

const Script = vm.Script;
vm.Script = class extends Script {
  constructor(code, options) {
    super(code, options);
    if (process.env.CODE_CACHE_LOG && options?.filename)
      appendFileSync(
        process.env.CODE_CACHE_LOG,
        `${JSON.stringify({ chunk: basename(options.filename), given: options.cachedData !== undefined, rejected: this.cachedDataRejected === true })}\n`,
      );
  }
};
syncBuiltinESMExports();
