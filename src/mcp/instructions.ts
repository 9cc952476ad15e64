/**
 * What the MCP server says of itself at `initialize`: its name and the instructions, made of the backlogs'
 * own vocabulary (statuses, id prefix, kinds of item). Kept apart from server.ts, which loads the SDK: the
 * stdio server answers `initialize` before the SDK and the service are loaded (early.ts).
 */
import type { BacklogService } from '../service/backlog-service.js';
import { VERSION } from '../version.js';

/** What the instructions read of one backlog (a BacklogService, or its description before it is loaded). */
export type Described = Pick<BacklogService, 'format' | 'vocabulary' | 'isDemo'>;

/** What the instructions read of the backlogs served (a Workspace). */
export interface Backlogs {
  multi: boolean;
  projects: readonly { name: string; service: Described }[];
}

export const SERVER_INFO = { name: 'backlog-search', title: 'Backlog search', version: VERSION };

/** What one backlog's instructions say of its vocabulary (statuses, id prefix, kinds of item). */
function vocabularyOf(service: Described): string {
  const { name, config } = service.format;
  const words = service.vocabulary();
  const ids = words.example_ids.length ? words.example_ids.join(', ') : `${config.taskPrefix}-1`;
  return name === 'backlog-md'
    ? `This is the Backlog.md project "${words.project}": statuses ${config.statuses.map((s) => `"${s}"`).join(', ')}; ids like ${ids} (sub-tasks ${config.taskPrefix}-12.1; a bare number is a task number); types ${words.kinds.map((k) => k.type).join(', ')}. ${BACKLOG_MD_STATES}`
    : `Statuses ${config.statuses.join(', ')}; ids like ${ids}; types ${words.kinds.map((k) => k.type).join(', ')}.`;
}

const BACKLOG_MD_STATES = `A task's state is its folder: active (tasks/), draft, completed, archived. Lines mark a task that is not active ("[In Progress, archived]"): archived and completed work is not open work. backlog_list shows active tasks and documents unless given state ("all", "archived", ...); search covers every state and ranks archived items lower.`;

/** What every server's instructions end with: how to use the tools. */
const HOW = `Start with backlog_search (words; filters such as status, types, tags, parent_id), then pass result ids to backlog_get for the content, or to backlog_get_metadata for file facts and links. backlog_list browses with filters and no query.
Writes (backlog_create, backlog_update, backlog_delete, backlog_write_resource) are validated strictly and are searchable as soon as they return.
Errors come back as {status: "error", error: {code, message, hint}}; follow the hint.`;

/** How answers name projects, when several backlogs may be open. */
const PROJECTS = `When more than one is open, results and items carry project and ids come qualified as <project>:<id> (pass them on as returned); reads cover every project unless given project (a name, a list, or "*"), and a write needs project.`;

/** The server's instructions, with the backlogs' own vocabulary (statuses, id prefix, kinds of item). */
function instructions(ws: Backlogs, roots: boolean): string {
  if (roots)
    return `Search and edit the backlogs of your roots: each root's backlog/ folder (or the root itself, if it is one) is a project, opened when the roots are listed and followed as they change; the tools' project option lists the open ones. ${PROJECTS}
${HOW}`;
  if (!ws.multi) {
    const service = ws.projects[0].service;
    return `Search and edit the backlog "${service.vocabulary().project}": markdown tasks and documents. ${vocabularyOf(service)}
${HOW}`;
  }
  // Compact: one clause per project (agents pay for every token of the instructions).
  const each = ws.projects.map((p) => {
    const { name, config } = p.service.format;
    const ids = p.service.vocabulary().example_ids[0] ?? `${config.taskPrefix}-1`;
    return `${p.name} (${name === 'backlog-md' ? 'Backlog.md; ' : ''}statuses ${config.statuses.join(', ')}; ids like ${p.name}:${ids})`;
  });
  const backlogMd = ws.projects.some((p) => p.service.format.name === 'backlog-md')
    ? ` In Backlog.md projects: ${BACKLOG_MD_STATES}`
    : '';
  return `Search and edit ${ws.projects.length} backlogs of markdown tasks and documents, one per project: ${each.join('; ')}. ${PROJECTS}${backlogMd}
${HOW}`;
}

/** Said first in the instructions, and last in every tool answer, when the server fell back to the demo backlog. */
export const DEMO_NOTICE =
  'NOTE: no backlog was found, so this server shows the built-in DEMO backlog, read-only: its items are examples, not your project. Start the server with --dir /path/to/your/backlog (or BACKLOG_DIR).';

/** The instructions of a read-only server: no write tools to mention. */
function readOnlyInstructions(text: string): string {
  return text.replace(/\nWrites \([^\n]*\n/, '\nThis server is read-only: it has no write tools.\n');
}

/** The only backlog open is the built-in demo: read-only, and every answer says so. */
export function demoOnly(ws: Backlogs): boolean {
  return ws.projects.length === 1 && ws.projects[0].service.isDemo;
}

/** The instructions for the backlogs open now (the demo's start with its notice). */
export function instructionsOf(ws: Backlogs, readOnly: boolean, roots: boolean): string {
  const text = readOnly ? readOnlyInstructions(instructions(ws, roots)) : instructions(ws, roots);
  return !roots && demoOnly(ws) ? `${DEMO_NOTICE}\n${text}` : text;
}
