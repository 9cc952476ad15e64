export {
  openBacklog,
  closeBacklog,
  backlogWatcher,
  defaultBacklogDir,
  type OpenBacklogOptions,
} from './service/open-backlog.js';
export { watchBacklog, type BacklogWatcher, type WatchOptions } from './service/watcher.js';
export {
  BacklogService,
  type SearchResult,
  type SearchResponse,
  type ListResponse,
  type ItemSummary,
  type GetEntry,
  type ItemMetadata,
  type BacklogVocabulary,
  type BacklogChange,
  type CreateInput,
  type UpdateInput,
  type DeleteInput,
  type WriteResourceInput,
  type WriteResult,
} from './service/backlog-service.js';
export {
  searchOptionsSchema,
  listOptionsSchema,
  type SearchOptions,
  type SearchOptionsInput,
  type ListOptionsInput,
  type SearchMode,
} from './service/options.js';
export {
  OramaSearchService,
  DEFAULT_SEARCH_SETTINGS,
  type SearchSettings,
} from './search/orama-search-service.js';
export { TextAnalyzer, LANGUAGES, type Language, type TokenizerSettings } from './search/tokenizer.js';
export type { SearchDocument, SearchFilters, SearchRequest, SearchHit, TextField } from './search/types.js';
export type { Snippet } from './search/snippet.js';
export { BacklogError, isBacklogError, type ErrorCode } from './errors.js';
export type { BacklogItem, Diagnostic, ItemType, TaskState } from './storage/types.js';
export { DEMO_BACKLOG_DIR } from './storage/demo.js';
export {
  openWorkspace,
  closeWorkspace,
  type OpenWorkspaceOptions,
  type WorkspaceBacklog,
} from './workspace/open-workspace.js';
export {
  Workspace,
  type WorkspaceProject,
  type ProjectProblem,
  type ProjectOption,
  type WithProject,
} from './workspace/workspace.js';
export { qualify, parseQualified } from './workspace/ids.js';
