import { defineConfig } from 'vitest/config';
import type { TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Files that need the machine to themselves run in a second group, after every other file
 * has finished. The vLLM gate test holds twelve generations on two CPU engines and asserts
 * what the router saw of their real queue; with other files running beside it the engines
 * and the router starve, and the queue it waited for has drained before the routed request
 * is read (docs/peers.md §vLLM on the CPU).
 */
const ALONE = ['test/peers/vllm-cpu.test.ts'];

const shared = {
  // Two cores on CI: integration tests start real servers, keep parallelism modest.
  testTimeout: 30_000,
  hookTimeout: 30_000,
  env: { FORCE_COLOR: '0' },
} satisfies TestProjectInlineConfiguration['test'];

export default defineConfig({
  test: {
    // Set here, not in the projects, so each runs once for the whole run: ports fetch refuses
    // are held for the run, so no test server draws one; the peers report says which real
    // peers the run has (docs/peers.md).
    globalSetup: ['test/helpers/hold-fetch-blocked-ports.ts', 'test/helpers/peers-report.ts'],
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          name: 'shared',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: ['**/node_modules/**', ...ALONE],
          sequence: { groupOrder: 0 },
        },
      },
      { test: { ...shared, name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
  },
});
