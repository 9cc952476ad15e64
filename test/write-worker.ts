/**
 * A second writer process for the cross-process tests and the stress bench: opens the backlog at argv[2]
 * (lexical, no watcher, no persisted index) and answers one JSON request per stdin line, in parallel:
 * `{"n": 1, "op": "create" | "update" | "get", "args": {...}}` -> `{"n": 1, "ok": true, "result": ...}`
 * or `{"n": 1, "ok": false, "code": "CONFLICT"}`. Prints `ready` once open.
 */
import { createInterface } from 'node:readline';
import { isBacklogError } from '../src/errors.js';
import { openBacklog } from '../src/service/open-backlog.js';

const service = await openBacklog({ dir: process.argv[2], embeddings: 'none', cacheDir: false });
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const { n, op, args } = JSON.parse(line) as { n: number; op: string; args: Record<string, unknown> };
  const run = async () => {
    if (op === 'create') return service.create(args as never);
    if (op === 'update') return service.update(args as never);
    return service.get(String(args.id));
  };
  run().then(
    (result) => process.stdout.write(`${JSON.stringify({ n, ok: true, result })}\n`),
    (err) =>
      process.stdout.write(
        `${JSON.stringify({ n, ok: false, code: isBacklogError(err) ? err.code : 'CRASH', message: String(err) })}\n`,
      ),
  );
}
await service.close();
