import type { TraceRequest } from '../../workload/index.js';
import type { HeldOutSplit } from './held-out-samples.js';
import { SAMPLES } from './held-out-samples.js';
import type { SampleOutcome } from './recommendation.js';

/**
 * A replay of a trace as the ranking needs it, in trace order: each request's TTFT in ms,
 * NaN when it got no first token, and which requests --admission slo shed (absent: none).
 */
export type TraceReplay = (trace: readonly TraceRequest[]) => { ttftMsByRequest: Float64Array; shedByRequest?: Uint8Array };

/**
 * Replay the split's traffic once per sample set, and read each sample's outcome
 * (docs/bench.md §Recommend): for trace windows one replay of the whole trace, sliced
 * by each request's window; for seeds one replay per seed.
 */
export function heldOutOutcomes(split: HeldOutSplit, replay: TraceReplay, sloTtftMs: number): SampleOutcome[] {
  if (split.kind === 'seeds') return split.traces.map((t) => sliceOutcomes(replay(t), new Uint8Array(t.length), 1, sloTtftMs)[0]!);
  return sliceOutcomes(replay(split.trace), split.windowOf, SAMPLES, sloTtftMs);
}

/** Each slice's requests, those within the objective, those shed, and the TTFT of each that got a first token. */
export function sliceOutcomes(
  { ttftMsByRequest, shedByRequest }: ReturnType<TraceReplay>,
  sliceOf: Uint8Array,
  slices: number,
  sloTtftMs: number,
): SampleOutcome[] {
  const outcomes = Array.from({ length: slices }, () => ({ requests: 0, good: 0, shed: 0, ttftMs: [] as number[] }));
  for (let i = 0; i < ttftMsByRequest.length; i++) {
    const o = outcomes[sliceOf[i]!]!;
    o.requests++;
    if (shedByRequest?.[i] === 1) o.shed++;
    const t = ttftMsByRequest[i]!;
    if (Number.isNaN(t)) continue;
    o.ttftMs.push(t);
    if (t <= sloTtftMs) o.good++;
  }
  return outcomes;
}
