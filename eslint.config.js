import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'node_modules/**', '.tap/**', '.stryker-tmp/**', 'reports/**'] }),
  {
    // src/main.ts is the only file that may touch process (signals, env, exit).
    files: ['src/**/*.ts'],
    ignores: ['src/main.ts'],
    rules: {
      'n/no-process-exit': 'error',
      'no-restricted-globals': ['error', { name: 'process', message: 'Only src/main.ts touches process; take what you need as an argument.' }]
    }
  }
]
