import type { CommandModule } from 'yargs';
import checkConfig from './check-config.js';
import sim from './sim.js';

/** Every command, listed explicitly (yargs' commandDir cannot load ESM/TS). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const commands: CommandModule<any, any>[] = [checkConfig, sim];
