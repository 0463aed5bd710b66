import type { Argv, CommandModule } from 'yargs';

interface Args {
  workers: number;
  seed: number;
  'drain-secs': number;
}

/**
 * Internal: the child process `serve` forks for its embedded simulated fleet and
 * synthetic traffic. Hidden from --help; talks to its parent over IPC.
 */
const embeddedFleet: CommandModule<object, Args> = {
  command: 'embedded-fleet',
  describe: false,
  builder: (y: Argv) =>
    y
      .option('workers', { type: 'number', default: 4 })
      .option('seed', { type: 'number', default: 42 })
      // serve's --shutdown-drain-secs: how long a signal that reached the fleet waits for the router to stop it.
      .option('drain-secs', { type: 'number', default: 30 }) as unknown as Argv<Args>,
  handler: async (argv) => {
    const { runEmbeddedFleetChild } = await import('../src/embedded/index.js');
    await runEmbeddedFleetChild({ workers: argv.workers, seed: argv.seed, drainSecs: argv['drain-secs'] });
  },
};

export default embeddedFleet;
