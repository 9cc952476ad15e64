/**
 * Ids across projects (docs/workspace.md): `<project>:<id>` for tasks, epics and every other id
 * (`demo:TASK-0001`, `backlog.md:BACK-569@archived`), `mcp://backlog/<project>/<path>` for resource URIs.
 * `@` is taken by a duplicate id's later file, so the project goes in front, after a colon.
 */
import { RESOURCE_URI_PREFIX } from '../storage/parse.js';

/** A project name: lower case letters, digits, `.`, `_`, `-`; no `:` or `/`, which the qualified forms use. */
export const PROJECT_NAME = /^[a-z0-9][a-z0-9._-]*$/;

/** `Backlog.md` -> `backlog.md`, `My Repo` -> `my-repo`: a name the qualified forms can carry. */
export function projectSlug(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+|-+$/g, '');
  return slug || 'backlog';
}

/** The id as a workspace returns it: `demo:TASK-0001`, or `mcp://backlog/demo/docs/a.md` for a URI. */
export function qualify(project: string, id: string): string {
  return id.startsWith(RESOURCE_URI_PREFIX)
    ? `${RESOURCE_URI_PREFIX}${project}/${id.slice(RESOURCE_URI_PREFIX.length)}`
    : `${project}:${id}`;
}

/**
 * The project a reference names, and the reference as that project's own service reads it; `project`
 * is undefined for a bare reference. `isProject` says which first segments are project names: a URI
 * whose first folder is not a project (`mcp://backlog/tasks/x.md`) stays a bare reference.
 */
export function parseQualified(
  ref: string,
  isProject: (name: string) => boolean,
): { project?: string; ref: string } {
  const text = ref.trim();
  if (text.startsWith(RESOURCE_URI_PREFIX)) {
    const rest = text.slice(RESOURCE_URI_PREFIX.length);
    const slash = rest.indexOf('/');
    const first = slash > 0 ? safeDecode(rest.slice(0, slash)).toLowerCase() : '';
    if (first && isProject(first))
      return { project: first, ref: RESOURCE_URI_PREFIX + rest.slice(slash + 1) };
    return { ref: text };
  }
  // `name:` then anything but `//` (a URL such as https://... is not a qualified id).
  const m = /^([^:/\s]+):(?!\/\/)(.+)$/.exec(text);
  if (m && isProject(m[1].toLowerCase())) return { project: m[1].toLowerCase(), ref: m[2] };
  return { ref: text };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
