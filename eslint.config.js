import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.peers/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      // The rules of hooks, and their dependency lists. Not the React Compiler's rules
      // (refs, purity, set-state-in-effect): the console does not use the compiler, and
      // its hooks read refs while rendering on purpose (a latch kept across frames).
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
      // A leading underscore names what is kept unread on purpose (a rest sibling, a tuple slot).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Terminal output is matched and stripped by its escape sequences (\x1b[…m), and keys by their control bytes.
      'no-control-regex': 'off',
      // A closure declared before the value it reads (a close() for a console not rendered yet).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
);
