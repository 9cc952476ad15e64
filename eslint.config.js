import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.cache/', 'demo/', 'tmp/', 'viewer/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // gray-matter evaluates `---js` front matter with its default engines: only storage/frontmatter.ts,
      // which replaces them, may use it (docs/security.md).
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'gray-matter',
              message: 'Parse front matter with src/storage/frontmatter.ts (no code runs there).',
            },
            {
              name: 'js-yaml',
              message: 'Parse YAML with src/storage/frontmatter.ts (limits on aliases and size).',
            },
          ],
        },
      ],
    },
  },
  { files: ['src/storage/frontmatter.ts'], rules: { 'no-restricted-imports': 'off' } },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
