/**
 * The layering of src/ (docs/architecture.md), checked by `npm run lint`:
 *   storage  <-  search, embeddings  <-  service  <-  workspace  <-  surfaces (mcp, http, cli, the library's index.ts)
 * errors.ts and version.ts sit below everything; eval/ measures the search layer and is used by the CLI.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles in src/: each concern has one home, and a cycle means two homes.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'storage-is-the-bottom',
      severity: 'error',
      comment: 'storage/ knows files, not search, embeddings, the service or any surface.',
      from: { path: '^src/storage/' },
      to: { path: '^src/(search|embeddings|eval|service|mcp|http|cli)/' },
    },
    {
      name: 'search-and-embeddings-below-the-service',
      severity: 'error',
      comment: 'search/ and embeddings/ use storage/ and each other, never the service or a surface.',
      from: { path: '^src/(search|embeddings)/' },
      to: { path: '^src/(eval|service|mcp|http|cli)/' },
    },
    {
      name: 'eval-below-the-service',
      severity: 'error',
      comment: 'eval/ measures the search layer; the CLI calls it.',
      from: { path: '^src/eval/' },
      to: { path: '^src/(service|mcp|http|cli)/' },
    },
    {
      name: 'service-below-the-surfaces',
      severity: 'error',
      comment: 'service/ is what every surface calls; it never imports one.',
      from: { path: '^src/service/' },
      to: { path: '^src/(mcp|http|cli)/' },
    },
    {
      name: 'workspace-above-the-service',
      severity: 'error',
      comment:
        'workspace/ holds one BacklogService per backlog and merges their answers; nothing below it imports it, and it imports no surface.',
      from: { path: '^src/(storage|search|embeddings|eval|service)/' },
      to: { path: '^src/workspace/' },
    },
    {
      name: 'workspace-below-the-surfaces',
      severity: 'error',
      comment: 'workspace/ is called by the surfaces, never the reverse.',
      from: { path: '^src/workspace/' },
      to: { path: '^src/(mcp|http|cli)/' },
    },
    {
      name: 'surfaces-are-separate',
      severity: 'error',
      comment: 'mcp/ never imports http/ (http/ mounts mcp/ for Streamable HTTP; the CLI starts either).',
      from: { path: '^src/mcp/' },
      to: { path: '^src/(http|cli)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules|viewer|test|bench)/' },
  },
};
