import type { Argv } from 'yargs';
import { defineCommand } from '../src/cli/index.js';
import { COMMAND_DESCRIPTIONS } from './registry/command-descriptions.js';

/**
 * Internal: the child process `serve` forks for its embedded simulated fleet and
 * synthetic traffic. Hidden from --help; talks to its parent over IPC.
 */
const embeddedFleet = defineCommand({
  command: 'embedded-fleet',
  describe: COMMAND_DESCRIPTIONS['embedded-fleet'],
  builder: (y: Argv) =>
    y.options({
      workers: { type: 'number', default: 4 },
      seed: { type: 'number', default: 42 },
      // serve's --shutdown-drain-secs: how long a signal that reached the fleet waits for the router to stop it.
      'drain-secs': { type: 'number', default: 30 },
    }),
  handler: async (argv) => {
    const { runEmbeddedFleetChild } = await import('../src/embedded/index.js');
    await runEmbeddedFleetChild({ workers: argv.workers, seed: argv.seed, drainSecs: argv['drain-secs'] });
  },
});

export default embeddedFleet;
