import { link, mkdir, open, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Creates `path` with `data`, failing with EEXIST when it already exists, and never showing a
 * half-written file: the data goes to a temporary file in the same folder (fsync), which is then
 * hard-linked to the target (`link` fails when the target exists, like the `wx` flag). Where hard
 * links are not supported the file is created with the `wx` flag directly.
 */
export async function createFileExclusive(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let linked = false;
  try {
    await writeFile(tmp, data, { flag: 'wx' });
    const fh = await open(tmp, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await link(tmp, path);
      linked = true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (
        code !== 'EPERM' &&
        code !== 'ENOTSUP' &&
        code !== 'EOPNOTSUPP' &&
        code !== 'EXDEV' &&
        code !== 'ENOSYS'
      )
        throw err;
    }
    if (!linked) {
      const fh2 = await open(path, 'wx');
      try {
        await fh2.writeFile(data);
        await fh2.sync();
      } finally {
        await fh2.close();
      }
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/** Takes an exclusive marker file (`wx`); false when someone else holds it. */
export async function tryCreateMarker(path: string): Promise<boolean> {
  try {
    await mkdir(dirname(path), { recursive: true });
    const fh = await open(path, 'wx');
    await fh.writeFile(`${process.pid}\n`);
    await fh.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}
