/**
 * Reading a file that a backlog may have planted (anything under `.cache/` can arrive with a clone or
 * `git pull`): never through a symbolic link, never waiting on a FIFO, never a file that is not regular
 * (a link to /dev/zero, read like a file, grows without end).
 */
import { constants, type BigIntStats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Flags of every such open: no link followed, no wait on a FIFO (the caller checks the file is regular). */
export const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Opens `path` for reading when it is a regular file. Throws as `open` does (ENOENT: none; ELOOP: a
 * link), and with code EFTYPE when it is something else (a folder, a FIFO, a device).
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const fh = await open(path, READ_FLAGS);
  if ((await fh.stat()).isFile()) return fh;
  await fh.close();
  throw Object.assign(new Error(`${path} is not a regular file`), { code: 'EFTYPE' });
}

/** The bytes of the regular file at `path` and its status after they were read (one descriptor); throws as openRegularFile. */
export async function readRegularFile(path: string): Promise<{ bytes: Buffer; stat: BigIntStats }> {
  const fh = await openRegularFile(path);
  try {
    const bytes = await fh.readFile();
    return { bytes, stat: await fh.stat({ bigint: true }) };
  } finally {
    await fh.close();
  }
}
