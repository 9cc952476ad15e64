/**
 * One request in each project of a scope. A filter value that only some projects have (a status, a type, a
 * parent) is no error while one project accepts it; a project that fails for another reason of its own is
 * left out and named in `failed` (the others are still served); an error that is the caller's (a bad
 * option, a budget) is the same in every project and is thrown. Every project failing throws the first error.
 */
import { errors, isBacklogError } from '../errors.js';
import type { WorkspaceProject } from './types.js';

/** Each project's answer, and the projects that failed (a warning each: the others are still served). */
type Answers<T> = Array<[WorkspaceProject, T]> & { failed: string[] };

/** Filter values checked against each backlog: in a workspace, a value another backlog has is no error. */
const VALUE_FILTERS = new Set(['status', 'types', 'parent_id']);

export async function eachProject<T>(
  scope: WorkspaceProject[],
  run: (p: WorkspaceProject) => Promise<T | null>,
): Promise<Answers<T>> {
  const settled = await Promise.allSettled(scope.map(run));
  return collect(scope, settled);
}

export function eachProjectSync<T>(
  scope: WorkspaceProject[],
  run: (p: WorkspaceProject) => T | null,
): Answers<T> {
  const settled = scope.map((p): PromiseSettledResult<T | null> => {
    try {
      return { status: 'fulfilled', value: run(p) };
    } catch (reason) {
      return { status: 'rejected', reason };
    }
  });
  return collect(scope, settled);
}

function collect<T>(scope: WorkspaceProject[], settled: PromiseSettledResult<T | null>[]): Answers<T> {
  const out: Answers<T> = Object.assign([], { failed: [] as string[] });
  let firstError: unknown;
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') {
      if (s.value !== null) out.push([scope[i], s.value]);
      return;
    }
    const err = s.reason as unknown;
    const valueError =
      isBacklogError(err) && err.code === 'INVALID_FILTER' && VALUE_FILTERS.has(String(err.details.field));
    // Anything else that is the caller's (a bad option, a budget) is the same error in every project.
    if (isBacklogError(err) && !valueError && err.code !== 'INTERNAL') throw err;
    if (!valueError) out.failed.push(`${scope[i].name}: ${(err as Error)?.message ?? String(err)}`);
    firstError ??= err;
  });
  if (out.length === 0 && firstError !== undefined) {
    if (isBacklogError(firstError)) throw firstError;
    throw errors.internal(String((firstError as Error)?.message ?? firstError));
  }
  return out;
}
