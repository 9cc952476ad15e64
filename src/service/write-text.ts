/** What the writes share below their logic: text edits of a body, the size check, file-system errors, the guarded commit. */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { BacklogError, errors, isBacklogError } from '../errors.js';
import { MAX_FILE_BYTES } from '../storage/backlog-store.js';
import { writeFileAtomic } from '../storage/write-file.js';

export function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

export function replaceString(
  text: string,
  oldString: string,
  newString: string,
  all: boolean,
  where: string,
): { text: string; count: number } {
  const count = countOccurrences(text, oldString);
  if (count === 0)
    throw new BacklogError(
      'CONFLICT',
      `old_string was not found in ${where}; nothing was written`,
      'Read the current text (backlog_get) and copy the exact passage, whitespace and line breaks included.',
      { field: 'old_string' },
    );
  if (count > 1 && !all)
    throw new BacklogError(
      'CONFLICT',
      `old_string occurs ${count} times in ${where}; nothing was written`,
      'Include more surrounding text so it occurs once, or pass replace_all: true.',
      { field: 'old_string', occurrences: count },
    );
  return {
    text: all ? text.split(oldString).join(newString) : text.replace(oldString, () => newString),
    count,
  };
}

export function appendText(text: string, addition: string, crlf = false): string {
  return text === '' || text.endsWith('\n') ? text + addition : `${text}${crlf ? '\r\n' : '\n'}${addition}`;
}

export function checkSize(text: string, field: string): void {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_FILE_BYTES)
    throw errors.inputTooLarge(
      field,
      `the file would be ${bytes} bytes, over the ${MAX_FILE_BYTES}-byte limit`,
      'Split the content over several files.',
      { bytes, limit: MAX_FILE_BYTES },
    );
}

export function fsError(err: unknown, rel: string): never {
  if (isBacklogError(err)) throw err;
  const e = err as NodeJS.ErrnoException;
  throw new BacklogError(
    'INTERNAL',
    `${rel}: ${e.code ? `${e.code} ` : ''}${e.message ?? String(err)}`,
    'The file system refused the write; check that the file and its folder are writable, then retry.',
    { path: rel },
  );
}

/**
 * Writes `data` over `abs` unless the file changed since it was read (`read`: its stats then); false
 * when it did (the caller reads again), CONFLICT after three tries. The window left between this check
 * and the rename is a few system calls.
 */
export async function commitIfUnchanged(
  abs: string,
  read: Stats,
  data: string,
  rel: string,
  attempt: number,
): Promise<boolean> {
  const now = await stat(abs).catch(() => null);
  const same =
    now !== null &&
    now.ino === read.ino &&
    now.size === read.size &&
    now.mtimeMs === read.mtimeMs &&
    now.ctimeMs === read.ctimeMs;
  if (!same) {
    if (attempt < 3) return false;
    throw new BacklogError(
      'CONFLICT',
      `${rel} kept changing on disk while it was being updated; nothing was written`,
      'Another program is writing this file; retry when it is done.',
      { path: rel },
    );
  }
  try {
    await writeFileAtomic(abs, data);
  } catch (err) {
    fsError(err, rel);
  }
  return true;
}

/** Line breaks of `text` as the file writes them (an agent's `\n` becomes `\r\n` in a CRLF file). */
export function inFileEol(text: string, crlf: boolean): string {
  return crlf && !text.includes('\r') ? text.replace(/\n/g, '\r\n') : text;
}
