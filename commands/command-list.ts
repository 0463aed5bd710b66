import type { CommandModule } from 'yargs';
import bench from './bench.js';
import checkConfig from './check-config.js';
import doctor from './doctor.js';
import explain from './explain.js';
import serve from './serve.js';
import sim from './sim.js';
import top from './top.js';
import embeddedFleet from './embedded-fleet.js';

/**
 * Every command, listed explicitly (yargs' commandDir cannot load ESM/TS). Each module
 * holds its option table and loads its implementation in its handler, so `--help`
 * reads the tables alone.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const commands: CommandModule<any, any>[] = [serve, top, explain, doctor, checkConfig, sim, bench, embeddedFleet];
