import { CHAT_DEFAULTS, parseGspSpec } from '../../src/bench/flags/index.js';
import { usageError } from '../../src/errors/index.js';
import type { BenchInputArgv } from '../options/bench.js';

/** Who is benched: one endpoint, or simulated configurations (one for `bench run`). */
export interface BenchTarget {
  url: string | undefined;
  compare: string[];
  sweep: string[];
  /** `bench compare --recommend`: pick on samples 1–3, check on 4–6. */
  recommend?: boolean;
}

/** `START..END` seconds of trace time. */
function traceWindow(text: string | undefined): [number, number] | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)\.\.(\d+(?:\.\d+)?)$/.exec(text.trim());
  if (!m || Number(m[2]) <= Number(m[1]))
    throw usageError(`--trace-window takes START..END seconds with END after START, e.g. 0..600 (got '${text}')`);
  return [Number(m[1]), Number(m[2])];
}

/**
 * Run `bench run` or `bench compare` on its input: a trace or the gsp dataset replayed
 * on either clock, else the chat workload; resolves to the exit status.
 */
export async function benchInputs(argv: BenchInputArgv, target: BenchTarget): Promise<number> {
  const gsp = argv.workload === 'gsp';
  if (target.recommend && argv.trace === undefined && !gsp)
    throw usageError('--recommend ranks configurations on a replay: give --trace FILE (or --workload gsp) and --clock virtual');
  if (argv.trace !== undefined || argv.clock === 'virtual' || gsp) {
    if (argv.trace !== undefined && gsp) throw usageError('--trace and --workload gsp are two workloads: give one');
    if (argv.trace === undefined && !gsp)
      throw usageError('--clock virtual replays a trace: give it with --trace FILE (or --workload gsp)');
    const knobs = argv.gsp ?? parseGspSpec([]);
    if ((knobs.groupDistribution === 'zipf') !== (knobs.zipfAlpha !== undefined))
      throw usageError('--gsp zipf-alpha goes with group-distribution=zipf, and zipf needs it');
    if (target.url !== undefined)
      throw usageError(`${gsp ? '--workload gsp' : '--trace'} runs simulated fleets of its own: it takes no --url`);
    const { parseDuration, runTraceBench } = await import('../../src/bench/index.js');
    const timeoutMs = parseDuration(String(argv.timeout));
    if (timeoutMs === undefined || timeoutMs <= 0)
      throw usageError(`--timeout takes a duration such as 120s or 2m (got '${String(argv.timeout)}')`);
    return runTraceBench({
      clock: argv.clock,
      simSpeedup: argv['sim-speedup'],
      timeoutMs,
      note: argv.json ? undefined : (line) => void process.stderr.write(`${line}\n`),
      file: argv.trace,
      gsp: gsp ? { ...knobs, rate: argv.rate, seed: argv.seed } : undefined,
      traceBlockSize: argv['trace-block-size'],
      speedup: argv['trace-speedup'],
      limit: argv['trace-limit'],
      window: traceWindow(argv['trace-window']),
      compare: target.compare,
      sweep: target.sweep,
      routerArgs: argv['router-args'],
      workers: argv['sim-workers'],
      kvBlocks: argv['sim-kv-blocks'],
      maxRunning: argv['sim-max-running'],
      contextLength: argv['sim-context-length'],
      recommend: target.recommend ?? false,
      seed: argv.seed,
      sloTtftMs: argv['slo-ttft-ms'],
      json: argv.json,
    });
  }
  const { parseBenchArgs, runBench } = await import('../../src/bench/index.js');
  return runBench(parseBenchArgs({ ...argv, chat: argv.chat ?? { ...CHAT_DEFAULTS }, ...target }));
}
