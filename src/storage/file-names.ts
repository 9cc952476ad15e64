/** Pieces of a backlog path (relative, `/`-separated). */

/** Extension without the dot, lower-case (`md`), or '' when there is none. */
export function fileType(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** The file name without its folder and extension. */
export function baseName(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** Extensions whose files may open with front matter. */
export const FRONTMATTER_EXTENSIONS = new Set(['md', 'mdx', 'markdown']);
