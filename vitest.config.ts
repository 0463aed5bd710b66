import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Ports fetch refuses are held for the run, so no test server draws one; the peers
    // report says which real peers the run has (docs/peers.md).
    globalSetup: ['test/helpers/hold-fetch-blocked-ports.ts', 'test/helpers/peers-report.ts'],
    // Two cores on CI: integration tests start real servers, keep parallelism modest.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: { FORCE_COLOR: '0' },
  },
});
