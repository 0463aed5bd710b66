import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RouterConfig } from '../../src/config/index.js';
import { PRESETS, runPreset } from '../../src/bench/index.js';
import { conversationTrace, MOONCAKE_CONVERSATIONS, toMooncakeJsonl } from '../../src/workload/index.js';
import { ROUTERCTL_BIN } from './processes.js';
import { RESULTS_DIR } from './results.js';
import type { Figures } from './results.js';

/**
 * The cells the gate benchmarks share: 8 simulated SGLang engines of 32,768 KV blocks
 * replaying a trace with Mooncake's conversation statistics at 80, 95 and 110 % of
 * capacity, goodput judged at TTFT ≤ 2 s, and the fixed-gate arms both compare. What
 * they found: docs/routing.md §Why a fixed limit hurts, docs/routing.md §Gate modes.
 */
export const GATE_WORKERS = 8;
export const GATE_KV_BLOCKS = 32_768;
export const GATE_SLO_MS = 2000;
export const GATE_LOADS = [0.8, 0.95, 1.1];

export interface GateArm {
  readonly key: string;
  readonly label: string;
  /** As `bench compare` takes a configuration. */
  readonly flags: string;
  /** The same, as a router config (for in-process replays and presets). */
  readonly config: Partial<RouterConfig>;
}

/** No gate, fixed limits 2, 4, 6, 8 and 16, and the floor at 2 under a limit of 4. */
export const FIXED_GATE_ARMS: readonly GateArm[] = [
  { key: 'off', label: 'no gate', flags: '', config: {} },
  ...[2, 4, 6, 8, 16].map((l) => ({
    key: `l${l}`,
    label: `limit ${l}`,
    flags: `--worker-queue-limit ${l}`,
    config: { workerQueueLimit: l },
  })),
  {
    key: 'floor2',
    label: 'floor 2, limit 4',
    flags: '--saturation-queue-floor 2 --worker-queue-limit 4',
    config: { workerQueueLimit: 4, saturationQueueFloor: 2 },
  },
];

/** `bench compare`'s flags for one cell's fleet on the virtual clock, running cap `cap`. */
export const gateFleetFlags = (cap: number): string[] => [
  '--clock',
  'virtual',
  '--sim-workers',
  String(GATE_WORKERS),
  '--sim-kv-blocks',
  String(GATE_KV_BLOCKS),
  '--sim-max-running',
  String(cap),
];

/**
 * Each running cap's capacity in requests a second: the rate at which plain cache_aware's
 * goodput first drops below 90 %, as `npm run perf -- gate-sweep` found it (its figures,
 * 33 and 58, when its results are missing).
 */
export function gateCapacities(): Record<number, number> {
  const file = path.join(RESULTS_DIR, 'gate-sweep.json');
  const fallback = { 16: 33, 256: 58 };
  if (!existsSync(file)) return fallback;
  const f = (JSON.parse(readFileSync(file, 'utf8')) as { figures: Figures }).figures;
  return { 16: Number(f.cap16_rate_90_rps ?? fallback[16]), 256: Number(f.cap256_rate_90_rps ?? fallback[256]) };
}

/** `routerctl bench compare … --json` through the built binary: its runs, one per configuration. */
export function benchCompareRuns<T>(args: readonly string[]): T[] {
  const r = spawnSync(process.execPath, [ROUTERCTL_BIN, 'bench', 'compare', ...args, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`routerctl bench compare exited ${r.status}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { runs: T[] }).runs;
}

/** `--preset b2b-saas` (llm-d's workload, seed 1) with each arm as cache_aware on the events index, as llm-d's own arms run. */
export function runB2bSaas(arms: readonly GateArm[]): ReturnType<typeof runPreset> {
  const b2b = PRESETS['b2b-saas']!;
  const presetArms = arms.map((a, i) => ({
    letter: String.fromCharCode(65 + i),
    peer: null,
    label: a.label,
    config: { policy: 'cache_aware' as const, prefixSource: 'events' as const, ...a.config },
    prefixSource: 'events' as const,
  }));
  return runPreset({ ...b2b, arms: presetArms }, 1);
}

/** One cell: the conversation trace at `load` × the cap's capacity, written into `dir`. */
export interface GateCell {
  readonly cap: number;
  readonly load: number;
  /** Requests a second: the load × `gateCapacities()`'s figure for the cap. */
  readonly rate: number;
  /** `cap16_load95`: how the cell's figures are keyed. */
  readonly key: string;
}

/**
 * Replay one cell's trace (`requests` of Mooncake's conversation statistics, trace seed
 * `traceSeed`) through every configuration in `flags`, once per fleet seed: the runs, by
 * seed then configuration.
 */
export function runGateCell<T>(
  o: { dir: string; capacity: Record<number, number>; requests: number; traceSeed: number; seeds: readonly number[] },
  cap: number,
  load: number,
  flags: readonly string[],
): { cell: GateCell; perSeed: T[][] } {
  const rate = Number((o.capacity[cap]! * load).toFixed(2));
  const file = path.join(o.dir, `conversations-${rate}.jsonl`);
  writeFileSync(file, toMooncakeJsonl(conversationTrace({ requests: o.requests, rate, ...MOONCAKE_CONVERSATIONS, seed: o.traceSeed })));
  const perSeed = o.seeds.map((seed) =>
    benchCompareRuns<T>(['--trace', file, ...gateFleetFlags(cap), '--slo-ttft-ms', String(GATE_SLO_MS), '--seed', String(seed), ...flags]),
  );
  return { cell: { cap, load, rate, key: `cap${cap}_load${Math.round(load * 100)}` }, perSeed };
}
