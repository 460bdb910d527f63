/** Unit tests of the renderer in jsdom, on transcripts made by `scripts/make_fixtures.py`. */
module.exports = {
  testEnvironment: 'jsdom',
  testMatch: ['<rootDir>/tests/**/*.spec.ts'],
  setupFiles: ['<rootDir>/tests/setup.js'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
    // @jupyter/ydoc (JupyterLab's shared notebook model, for the live-edit tests) and @noble/hashes ship
    // ES modules only.
    '^.+/(@jupyter/ydoc|@noble/hashes)/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', isolatedModules: true } }
    ]
  },
  transformIgnorePatterns: ['/node_modules/(?!(@jupyter/ydoc|@noble/hashes)/)']
};
