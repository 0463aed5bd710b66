import type { TraceRequest } from '../../workload/index.js';

/** How many samples a recommendation takes: the first half picks, the second half checks. */
export const SAMPLES = 6;
export const PICKING = 3;

/** One slice of traffic a recommendation ranks on. */
export interface HeldOutSample {
  /** 1-based, as the report numbers them. */
  index: number;
  role: 'pick' | 'check';
  requests: number;
  /** Trace windows: [from, to) in ms of the trace as replayed. */
  fromMs?: number;
  toMs?: number;
  /** Generated workloads: the seed of this sample. */
  seed?: number;
}

/**
 * What each configuration replays, and how its outcomes fall into samples
 * (docs/bench.md §Recommend): a trace's windows are slices of one continuous replay of
 * the whole trace, so each window meets the cache and the queues the traffic before it
 * left; a generated workload's seeds are separate draws, each replayed on its own.
 */
export type HeldOutSplit =
  | {
      kind: 'trace_windows';
      samples: HeldOutSample[];
      trace: readonly TraceRequest[];
      /** Each request's window, 0-based, in trace order. */
      windowOf: Uint8Array;
    }
  | { kind: 'seeds'; samples: HeldOutSample[]; traces: TraceRequest[][] };

/**
 * A trace cut by arrival time into SAMPLES windows of equal trace time: windows 1–3
 * pick, 4–6 check. Equal time, not equal counts, so a burst or a lull stays in the
 * window where it happened. The trace is not re-timed: the windows are slices of one
 * replay of it, and only the first starts cold. Undefined for a trace whose later
 * turns wait on earlier ones (a generated workload): their arrival is not the trace's,
 * and such a workload is sampled by seed instead.
 */
export function traceWindows(trace: readonly TraceRequest[]): HeldOutSplit | undefined {
  if (trace.some((r) => r.after !== undefined)) return undefined;
  const span = trace.reduce((m, r) => Math.max(m, r.atMs), 0);
  const width = span / SAMPLES;
  const samples: HeldOutSample[] = Array.from({ length: SAMPLES }, (_, k) => ({
    index: k + 1,
    role: k < PICKING ? 'pick' : 'check',
    requests: 0,
    fromMs: Math.round(k * width),
    toMs: Math.round((k + 1) * width),
  }));
  const windowOf = new Uint8Array(trace.length);
  trace.forEach((r, i) => {
    const k = width > 0 ? Math.min(SAMPLES - 1, Math.floor(r.atMs / width)) : 0;
    windowOf[i] = k;
    samples[k]!.requests++;
  });
  return { kind: 'trace_windows', samples, trace, windowOf };
}

/** A generated workload drawn SAMPLES times, seeds seed … seed+5: the first three pick, the last three check. */
export function seedSamples(seed: number, generate: (seed: number) => TraceRequest[]): HeldOutSplit {
  const traces = Array.from({ length: SAMPLES }, (_, k) => generate(seed + k));
  return {
    kind: 'seeds',
    samples: traces.map((trace, k) => ({ index: k + 1, role: k < PICKING ? 'pick' : 'check', requests: trace.length, seed: seed + k })),
    traces,
  };
}
