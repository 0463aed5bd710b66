import type { TraceRequest } from '../../workload/index.js';

/** How many samples a recommendation takes: the first half picks, the second half checks. */
export const SAMPLES = 6;
export const PICKING = 3;

/** One slice of traffic a recommendation replays on its own fresh fleets. */
export interface HeldOutSample {
  /** 1-based, as the report numbers them. */
  index: number;
  role: 'pick' | 'check';
  trace: TraceRequest[];
  /** Trace windows: [from, to) in ms of the trace as replayed. */
  fromMs?: number;
  toMs?: number;
  /** Generated workloads: the seed of this sample. */
  seed?: number;
}

/**
 * A trace cut into SAMPLES windows of equal trace time, each re-timed from its own
 * start: windows 1–3 pick, 4–6 check. Equal time, not equal counts, so a burst or a
 * lull stays in the window where it happened. Undefined for a trace whose later
 * turns wait on earlier ones (a generated workload): cutting would orphan them, and
 * such a workload is sampled by seed instead.
 */
export function traceWindows(trace: readonly TraceRequest[]): HeldOutSample[] | undefined {
  if (trace.some((r) => r.after !== undefined)) return undefined;
  const span = trace.reduce((m, r) => Math.max(m, r.atMs), 0);
  const width = span / SAMPLES;
  const windows: HeldOutSample[] = Array.from({ length: SAMPLES }, (_, k) => ({
    index: k + 1,
    role: k < PICKING ? 'pick' : 'check',
    trace: [],
    fromMs: Math.round(k * width),
    toMs: Math.round((k + 1) * width),
  }));
  for (const r of trace) {
    const k = width > 0 ? Math.min(SAMPLES - 1, Math.floor(r.atMs / width)) : 0;
    windows[k]!.trace.push({ ...r, atMs: r.atMs - k * width });
  }
  return windows;
}

/** A generated workload drawn SAMPLES times, seeds seed … seed+5: the first three pick, the last three check. */
export function seedSamples(seed: number, generate: (seed: number) => TraceRequest[]): HeldOutSample[] {
  return Array.from({ length: SAMPLES }, (_, k) => ({
    index: k + 1,
    role: k < PICKING ? 'pick' : 'check',
    trace: generate(seed + k),
    seed: seed + k,
  }));
}
