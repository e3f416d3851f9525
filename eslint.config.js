import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import local from './eslint/no-import-cycle.js';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test/cluster/bin/', 'test/flux/bin/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  // @actions/core belongs to the action's edge alone: everything else takes its inputs, log and
  // secrets injected, so that the CLI and the tests run the same code without a runner.
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    ignores: ['src/main.ts', 'src/action/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@actions/core',
              message: 'Only src/main.ts and src/action/ may use @actions/core: inject what you need instead.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly' },
    },
  },
  {
    // No module of src/ imports itself back, nor do two of its folders import each other.
    files: ['src/**/*.ts'],
    plugins: { local },
    rules: {
      'local/no-import-cycle': [
        'error',
        {
          root: 'src',
          folders: true,
          // kustomize/ reads flux/'s Patch and Image types and parseDuration (in flux/parse.ts): they
          // belong in kustomize/ and util/ once the split of flux/parse.ts lands.
        },
      ],
    },
  },
);
