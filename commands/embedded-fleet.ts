import type { Argv, CommandModule } from 'yargs';

interface Args {
  workers: number;
  seed: number;
}

/**
 * Internal: the child process `serve` forks for its embedded simulated fleet and
 * synthetic traffic. Hidden from --help; talks to its parent over IPC.
 */
const embeddedFleet: CommandModule<object, Args> = {
  command: 'embedded-fleet',
  describe: false,
  builder: (y: Argv) =>
    y.option('workers', { type: 'number', default: 4 }).option('seed', { type: 'number', default: 42 }) as unknown as Argv<Args>,
  handler: async (argv) => {
    const { runEmbeddedFleetChild } = await import('../src/embedded/index.js');
    await runEmbeddedFleetChild({ workers: argv.workers, seed: argv.seed });
  },
};

export default embeddedFleet;
