// ESLint's flat config: the recommended rules, with each folder's runtime named by
// its globals. scenarios/, bench/k6, dev/k6 and test/k6 run inside k6 (goja: __ENV,
// __VU, __ITER, open); common/ is imported by both k6 and Node; the rest is Node.
import js from '@eslint/js';
import globals from 'globals';

const k6Globals = { __ENV: 'readonly', __VU: 'readonly', __ITER: 'readonly', open: 'readonly' };

export default [
  { ignores: ['node_modules/', '.tools/', '.run/', 'results/'] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: { ...globals.node } },
    rules: {
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-duplicate-imports': 'error',
    },
  },
  {
    files: ['scenarios/**/*.js', 'bench/k6/**/*.js', 'dev/k6/**/*.js', 'test/k6/**/*.js', 'common/**/*.js'],
    languageOptions: { globals: { ...k6Globals } },
  },
  // Code that lib/report/report-page.js and charts.js put into the HTML report (and lib/history/trends-page.js
  // into the trend page) runs in the browser.
  // (test/report.test.js and test/history-gate.test.js evaluate some in Chromium.)
  {
    files: ['lib/report/**/*.js', 'lib/history/trends-page.js', 'test/report.test.js', 'test/history-gate.test.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
];
