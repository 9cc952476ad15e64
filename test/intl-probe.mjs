// Preloaded with `node --import` by test/startup.test.ts: appends the name of every Intl object the process
// makes to the file named by INTL_LOG, one per line. The first one of a process loads ICU's list of
// locales (~25 ms of a start), so a lookup that needs none must make none (issue #23).
import { appendFileSync } from 'node:fs';
import process from 'node:process';

for (const name of ['Segmenter', 'Collator', 'DateTimeFormat', 'NumberFormat', 'PluralRules', 'ListFormat']) {
  const Original = Intl[name];
  Intl[name] = class extends Original {
    constructor(...args) {
      super(...args);
      if (process.env.INTL_LOG) appendFileSync(process.env.INTL_LOG, `${name}\n`);
    }
  };
}
