import type { RouterConfig } from '../../src/config/index.js';

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
