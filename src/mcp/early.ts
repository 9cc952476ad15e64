/**
 * The stdio server's answer to `initialize` before the MCP SDK and the service are loaded (issue #23:
 * `initialize` in a fraction of a second; loading them takes several times Node's own start). The
 * answer is the SDK's own: the same server info, capabilities and instructions (instructions.ts), the
 * protocol version negotiated as the SDK negotiates it. Everything the client sends still goes to the SDK
 * once it is connected, `initialize` included (it records the client's capabilities there); its answer
 * to a request answered here is not sent again. When the two answers differ, stderr says so (a test
 * checks they do not). A request that is not the first message, or a protocol version not listed here,
 * is left to the SDK.
 */
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { PassThrough, Writable, type Readable } from 'node:stream';
import { userConfigDir } from '../storage/user-config.js';
import { VERSION } from '../version.js';
import { SERVER_INFO, instructionsOf } from './instructions.js';

/** The SDK's SUPPORTED_PROTOCOL_VERSIONS (test/mcp-stdio.test.ts checks the copy); the first is its latest. */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

/** What a server of one backlog (no roots) announces; the SDK's answer is checked against it. */
export const CAPABILITIES = { tools: { listChanged: true }, resources: { listChanged: true } };

export interface EarlyStdio {
  /** For the SDK's transport: what the client sent, from its first byte. */
  stdin: Readable;
  /** For the SDK's transport: stdout, less its answer to an `initialize` already answered here. */
  stdout: Writable;
  /** Stops reading stdin (after the transport closed), so that the process can exit. */
  release(): void;
  /**
   * The instructions answered (undefined: none, the SDK answers), when known; the server is made with
   * them, so that its own answer, which is not sent, is the same.
   */
  ready: Promise<string | undefined>;
}

type Id = string | number;

/**
 * `backlog-search mcp --dir <dir>`: answers `initialize` with the instructions made from the folder's
 * config.yml (as createMcpServer makes them before the items are read). Reading config.yml loads the
 * storage modules (yaml, zod: about half of the time to this answer), so the text is kept (keptInitializePath)
 * under a key of what it is made of (the version, the folder, config.yml's size and time, the folder's
 * entries), and the next start answers from it. A folder that is not there is left to the open, which
 * reports it.
 */
export function answerBacklogEarly(dir: string, readOnly: boolean): EarlyStdio {
  // A cache elsewhere is the service's to place: no file then.
  const file = process.env.BACKLOG_CACHE_DIR ? undefined : keptInitializePath(dir);
  const make = async () => {
    const described = await (await import('../service/describe-backlog.js')).describeBacklog(dir);
    const backlogs = { multi: false, projects: [{ name: '', service: described }] };
    return { text: instructionsOf(backlogs, readOnly || described.isDemo, false), demo: described.isDemo };
  };
  const instructions = stat(dir).then(async (st) => {
    if (!st.isDirectory()) return undefined;
    const key = await keyOf(dir, readOnly);
    const kept = file ? await readKept(file) : undefined;
    if (kept?.key === key) {
      // Checked once the storage modules are loaded anyway (the open loads them): a text made by another
      // build of the same version is said on stderr and dropped, so the next start makes it anew.
      void make().then(
        ({ text }) => {
          if (text === kept.instructions) return;
          process.stderr.write(
            'backlog-search: the kept initialize answer was out of date; made anew at the next start\n',
          );
          return rm(file!, { force: true });
        },
        () => undefined,
      );
      return kept.instructions;
    }
    const { text, demo } = await make();
    if (file && !demo) void keep(file, { key, instructions: text });
    return text;
  });
  return answerInitializeEarly(instructions.catch(() => undefined));
}

/**
 * Where the answer for `dir` is kept: beside the cache-signing key, outside every backlog (folder 0700,
 * file 0600). The answer is sent before anything checks it, and its instructions go into the agent's
 * context: a file in the backlog, which arrives with `git pull`, could put any text there.
 */
export function keptInitializePath(dir: string): string {
  const key = createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 32);
  return join(userConfigDir(), 'initialize', `${key}.json`);
}

interface Kept {
  key: string;
  instructions: string;
}

/** What the instructions are made of, as detectFormat reads it: config.yml, else the folders' layout. */
async function keyOf(dir: string, readOnly: boolean): Promise<string> {
  const [config, entries, tasks] = await Promise.all([
    stat(join(dir, 'config.yml')).catch(() => null),
    readdir(dir).catch(() => []),
    stat(join(dir, 'tasks')).catch(() => null),
  ]);
  return JSON.stringify([
    VERSION,
    dir,
    readOnly,
    config && [config.size, config.mtimeMs],
    entries.filter((name) => !name.startsWith('.')).sort(),
    tasks?.mtimeMs ?? null,
  ]);
}

async function readKept(file: string): Promise<Kept | undefined> {
  try {
    const kept = JSON.parse(await readFile(file, 'utf8')) as Partial<Kept>;
    return typeof kept.key === 'string' && typeof kept.instructions === 'string' ? (kept as Kept) : undefined;
  } catch {
    return undefined;
  }
}

/** Written whole or not at all (a temporary file renamed); a failure only means no shortcut next time. */
async function keep(file: string, kept: Kept): Promise<void> {
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(kept), { mode: 0o600 });
    await rename(tmp, file);
  } catch {
    // A read-only folder: answered from config.yml each time.
  }
}

/**
 * Starts reading stdin now; when the first message is `initialize`, answers it as soon as `instructions`
 * resolves (undefined: leaves it to the SDK), unless the SDK answered first.
 */
export function answerInitializeEarly(instructions: Promise<string | undefined>): EarlyStdio {
  const stdin = new PassThrough();
  process.stdin.pipe(stdin);
  let early: { id: Id; result: string } | undefined;
  // The id of the initialize request while its answer is owed, by this module or by the SDK.
  let pending: Id | undefined;
  let sdkAnswered = false;

  let line = '';
  const sniff = (chunk: Buffer) => {
    line += chunk.toString('utf8');
    const end = line.indexOf('\n');
    if (end < 0 && line.length < 1 << 16) return;
    process.stdin.off('data', sniff);
    const request = parse(end < 0 ? '' : line.slice(0, end));
    line = '';
    if (request?.method !== 'initialize' || request.id === undefined) return;
    const asked = request.params?.protocolVersion;
    const version = PROTOCOL_VERSIONS.includes(asked as string) ? (asked as string) : undefined;
    if (version === undefined) return;
    const id = request.id;
    pending = id;
    void instructions.then(
      (text) => {
        if (text === undefined || sdkAnswered) return;
        const result = JSON.stringify({
          protocolVersion: version,
          capabilities: CAPABILITIES,
          serverInfo: SERVER_INFO,
          instructions: text,
        });
        early = { id, result };
        process.stdout.write(`{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(id)}}\n`);
      },
      () => undefined, // the open reports it
    );
  };
  process.stdin.on('data', sniff);

  const stdout = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      if (pending !== undefined) {
        const message = parse(chunk.toString());
        if (message && message.id === pending && ('result' in message || 'error' in message)) {
          pending = undefined;
          sdkAnswered = true;
          if (early) {
            if (JSON.stringify(message.result) !== early.result)
              process.stderr.write(
                `backlog-search: the early initialize answer differs from the MCP SDK's: ${early.result} / ${JSON.stringify(message.result)}\n`,
              );
            return done();
          }
        }
      }
      process.stdout.write(chunk, (err) => done(err ?? undefined));
    },
  });

  return {
    stdin,
    stdout,
    ready: instructions,
    release() {
      process.stdin.off('data', sniff);
      process.stdin.unpipe(stdin);
      process.stdin.pause();
    },
  };
}

interface Message {
  id?: Id;
  method?: string;
  params?: { protocolVersion?: unknown };
  result?: unknown;
  error?: unknown;
}

function parse(text: string): Message | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Message) : undefined;
  } catch {
    return undefined;
  }
}
