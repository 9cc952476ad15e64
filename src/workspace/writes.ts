/**
 * Writes in a workspace: each goes to one project's BacklogService, which validates and writes as it
 * always does. A new item or resource goes to the only project in scope, else needs `project`
 * (PROJECT_REQUIRED); an update or delete goes where its id points (a qualified id, or a bare one that one
 * project has; AMBIGUOUS_ID otherwise).
 */
import { errors } from '../errors.js';
import type {
  CreateInput,
  DeleteInput,
  UpdateInput,
  WriteResourceInput,
  WriteResult,
} from '../service/write-inputs.js';
import { parseQualified } from './ids.js';
import type { ProjectOption, WithProject, WorkspaceProject, WorkspaceScope } from './types.js';

export class WorkspaceWrites {
  constructor(private readonly ws: WorkspaceScope) {}

  async create(input: CreateInput & ProjectOption): Promise<WithProject<WriteResult>> {
    const { project, ...rest } = input;
    const p = this.target(project);
    if (!this.ws.multi) return p.service.create(rest);
    return this.tag(p, await p.service.create(this.localParent(p, rest)));
  }

  async update(input: UpdateInput & ProjectOption): Promise<WithProject<WriteResult>> {
    const { project, ...rest } = input;
    // One backlog: the service's own write, answers and errors unchanged.
    if (!this.ws.multi) return this.ws.scope(project)[0].service.update(rest);
    const { p, id } = this.ws.locate(String(rest.id ?? ''), this.ws.scope(project));
    return this.tag(p, await p.service.update(this.localParent(p, { ...rest, id })));
  }

  async delete(input: DeleteInput & ProjectOption): Promise<WithProject<WriteResult>> {
    const { project, ...rest } = input;
    if (!this.ws.multi) return this.ws.scope(project)[0].service.delete(rest);
    const { p, id } = this.ws.locate(String(rest.id ?? ''), this.ws.scope(project));
    return this.tag(p, await p.service.delete({ ...rest, id }));
  }

  /** The path may name its project: `mcp://backlog/<project>/<path>` or `<project>:<path>`. */
  async writeResource(input: WriteResourceInput & ProjectOption): Promise<WithProject<WriteResult>> {
    const { project, ...rest } = input;
    if (!this.ws.multi) return this.ws.scope(project)[0].service.writeResource(rest);
    const parsed = parseQualified(String(rest.path ?? ''), (n) => this.ws.byName(n) !== undefined);
    const p = parsed.project ? this.ws.scope(parsed.project)[0] : this.target(project);
    if (parsed.project && project !== undefined && !this.ws.scope(project).includes(p))
      throw errors.invalidFilter(
        'project',
        `the path names project "${p.name}"`,
        `Pass project ${p.name}, or a path without one.`,
      );
    return this.tag(p, await p.service.writeResource({ ...rest, path: parsed.ref }));
  }

  /** The one project in scope; PROJECT_REQUIRED when there are several. */
  private target(project: ProjectOption['project']): WorkspaceProject {
    const scope = this.ws.scope(project);
    if (scope.length > 1) throw errors.projectRequired(scope.map((p) => p.name));
    return scope[0];
  }

  /** A parent named with its project must be in the project written to. */
  private localParent<T extends { parent_id?: string | null }>(p: WorkspaceProject, input: T): T {
    if (typeof input.parent_id !== 'string') return input;
    const parsed = parseQualified(input.parent_id, (n) => this.ws.byName(n) !== undefined);
    if (parsed.project && parsed.project !== p.name)
      throw errors.invalidFilter(
        'parent_id',
        `"${input.parent_id}" is in project ${parsed.project}, not in ${p.name}`,
        'A parent must be in the same backlog as its child.',
      );
    return { ...input, parent_id: parsed.ref };
  }

  private tag(p: WorkspaceProject, r: WriteResult): WithProject<WriteResult> {
    if (!this.ws.multi) return r;
    return {
      ...r,
      id: this.ws.idOf(p, r.id),
      uri: this.ws.idOf(p, r.uri),
      item: r.item && this.ws.tagSummary(p, r.item),
      ...(r.orphaned ? { orphaned: r.orphaned.map((id) => this.ws.idOf(p, id)) } : {}),
      project: p.name,
    };
  }
}
