// @ts-check
// `npm run lint` (CI runs it): ESLint with typescript-eslint's type-aware recommended rules over src, test, bench and scripts.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Segment's functions library is third-party code kept unchanged (with the script recording its runner's answers).
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'bench/results/**', 'coverage/**', 'test/fixtures/segment-functions-library/**'] },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // Each file is checked against its own tsconfig (src/portal/web has a DOM one).
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // The promise rules this config exists for; recommendedTypeChecked has them, stated so no later edit drops them unseen.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Off: Fastify's contract is an async plugin or handler (an async plugin with no await is how it says "registered"),
      // and Temporal's PayloadCodec methods must return promises; the promise rules above catch the real mistakes.
      '@typescript-eslint/require-await': 'off',
      // Off: the regexes that match control characters do it on purpose (header values, summaries, log colour codes).
      'no-control-regex': 'off',
      // A leading underscore names a value kept on purpose (a destructured field left out, an unused parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Kysely's migration idiom: a migration runs against the schema of its day, not today's typed one.
    files: ['src/store/migrations.ts', 'src/store/personas-migration.ts', 'src/store/dialect.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Off in tests: replies are read as parsed JSON (`any`) and checked by `expect`, which is the type check a test makes.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], extends: [tseslint.configs.disableTypeChecked] },
  {
    // Jest loads its sequencer and reporters (test/jest), and npm run build its transpile (scripts), as CommonJS, untransformed.
    files: ['test/jest/*.js', 'scripts/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', __filename: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
