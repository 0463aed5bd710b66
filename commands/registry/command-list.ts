import type { Argv, CommandModule } from 'yargs';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyCommand = CommandModule<any, any>;
type CommandName = keyof typeof COMMAND_DESCRIPTIONS;

/**
 * A command as yargs lists and matches it, by name and description; its module (the
 * option table its builder reads, the handler that loads its implementation) is
 * imported only when it is the command being run, so `routerctl --help` loads no
 * command and `routerctl top --help` no other command's table.
 */
function lazyCommand(command: CommandName, load: () => Promise<{ default: AnyCommand }>): AnyCommand {
  return {
    command,
    describe: COMMAND_DESCRIPTIONS[command],
    builder: async (y: Argv) => {
      const { builder } = (await load()).default;
      return typeof builder === 'function' ? builder(y) : y.options(builder ?? {});
    },
    handler: async (argv) => (await load()).default.handler(argv),
  };
}

/** Every command, listed explicitly (yargs' commandDir cannot load ESM/TS). */
export const commands: AnyCommand[] = [
  lazyCommand('serve', () => import('../serve.js')),
  lazyCommand('top', () => import('../top.js')),
  lazyCommand('explain', () => import('../explain.js')),
  lazyCommand('doctor', () => import('../doctor.js')),
  lazyCommand('check-config', () => import('../check-config.js')),
  lazyCommand('sim', () => import('../sim.js')),
  lazyCommand('bench', () => import('../bench.js')),
  lazyCommand('embedded-fleet', () => import('../embedded-fleet.js')),
];
