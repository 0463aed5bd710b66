import type { RouterConfig } from '../config/index.js';
import { usageError } from '../errors/index.js';
import { runTraceVirtual } from '../virtual/index.js';
import { gspTrace } from '../workload/index.js';
import type { TraceRequest } from '../workload/index.js';
import type { Configuration } from './configurations.js';
import { PICKING, SAMPLES, heldOutOutcomes, recommend, recommendationLines, seedSamples, traceWindows } from './recommend/index.js';
import type { HeldOutSample, RankedConfiguration, SampleSets } from './recommend/index.js';
import { boundsLines } from './trace-ceiling.js';
import type { TraceBounds } from './trace-ceiling.js';
import type { TraceBenchOptions } from './trace-bench-options.js';

export interface RecommendationInputs {
  trace: readonly TraceRequest[];
  /** The trace report's header: trace (with its bounds), clock, seed, fleet, objective. */
  header: { trace: { file: string | undefined; requests: number; digest: string; block_size: number }; clock: string } & Record<
    string,
    unknown
  >;
  bounds: TraceBounds;
  configs: readonly Configuration[];
  resolved: readonly RouterConfig[];
}

/** The queue gate is on when the configuration sets a limit and routes for the cache (docs/routing.md). */
export const gateOn = (c: RouterConfig): boolean => c.workerQueueLimit !== null && c.policy === 'cache_aware';

/**
 * `bench compare --recommend` on a trace or the gsp workload (docs/bench.md §Recommend):
 * the first three of six samples pick and the last three check. Each configuration
 * replays the whole trace once and its windows are slices of that replay, so only the
 * first starts cold; each gsp seed is replayed on a fresh virtual fleet.
 */
export async function runTraceRecommendation(
  o: TraceBenchOptions,
  inputs: RecommendationInputs,
  out: NodeJS.WritableStream,
): Promise<number> {
  if (o.clock !== 'virtual')
    throw usageError('--recommend replays six samples per configuration on the virtual clock: add --clock virtual');
  if (inputs.configs.length < 2)
    throw usageError('--recommend picks among configurations: give at least two (several quoted strings and/or --sweep)');
  const split = o.gsp ? seedSamples(o.seed, (seed) => gspTrace({ ...o.gsp!, seed })) : traceWindows(inputs.trace);
  if (split === undefined) throw usageError('--recommend cannot cut this trace into windows: its later turns wait on earlier ones');
  const samples = split.samples;
  if (samples.some((s) => s.requests === 0))
    throw usageError(`--recommend needs requests in each of ${SAMPLES} windows of trace time; this trace leaves one empty`);
  const ranked: RankedConfiguration[] = inputs.configs.map((c, i) => ({
    letter: c.letter,
    label: c.label,
    gate: gateOn(inputs.resolved[i]!),
    outcomes: heldOutOutcomes(
      split,
      (trace) =>
        runTraceVirtual({
          config: inputs.resolved[i]!,
          workers: o.workers,
          engine: { kvBlocks: o.kvBlocks, maxRunning: o.maxRunning, maxModelLen: o.contextLength },
          seed: o.seed,
          trace,
          traceBlockSize: o.traceBlockSize,
        }),
      o.sloTtftMs,
    ),
  }));
  const result = recommend(
    ranked,
    samples.map((s) => s.role),
  );
  const report = {
    ...inputs.header,
    recommend: { split: split.kind, samples: samples.map(sampleReport), ...result },
  };
  if (o.json) out.write(`${JSON.stringify(report)}\n`);
  else {
    const h = inputs.header.trace;
    const lines = [
      `trace ${h.file}: ${h.requests} requests (digest ${h.digest}), blocks of ${h.block_size} tokens; ${o.workers} simulated engines; ${inputs.header.clock} clock`,
      ...boundsLines(inputs.bounds),
      '',
      ...recommendationLines(result, sampleSets(samples, Boolean(o.gsp)), o.sloTtftMs),
    ];
    out.write(`${lines.join('\n')}\n`);
  }
  return ranked.some((c) => c.outcomes.some((x) => x.ttftMs.length > 0)) ? 0 : 1;
}

function sampleReport(s: HeldOutSample): Record<string, unknown> {
  return {
    index: s.index,
    role: s.role,
    requests: s.requests,
    ...(s.seed !== undefined ? { seed: s.seed } : { from_ms: s.fromMs, to_ms: s.toMs }),
  };
}

function sampleSets(samples: readonly HeldOutSample[], seeds: boolean): SampleSets {
  const describe = (set: readonly HeldOutSample[]): string => {
    const n = set.reduce((a, s) => a + s.requests, 0);
    const first = set[0]!;
    const last = set.at(-1)!;
    return seeds
      ? `${first.seed}–${last.seed} (${n} requests)`
      : `${first.index}–${last.index} (${Math.round(first.fromMs! / 1000)}–${Math.round(last.toMs! / 1000)} s, ${n} requests)`;
  };
  return {
    kind: seeds ? 'seeds' : 'trace windows',
    pick: describe(samples.slice(0, PICKING)),
    check: describe(samples.slice(PICKING)),
  };
}
