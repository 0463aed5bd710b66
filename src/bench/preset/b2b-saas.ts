import type { RouterConfig } from '../../config/index.js';
import type { EngineParams } from '../../sim/index.js';
import type { B2bSaasOptions } from '../../workload/index.js';

/** One arm of a preset: a router configuration, and what the index is built from. */
export interface PresetArm {
  readonly letter: string;
  /** The peer's name for it, or null where the peer has no such arm. */
  readonly peer: string | null;
  readonly label: string;
  readonly config: Partial<RouterConfig>;
  readonly prefixSource: 'requests' | 'events';
}

/** A peer's figures for one arm, in the peer's units. */
export interface PublishedRow {
  readonly outputTokensPerS: number;
  readonly ttftP90S: number;
  readonly ttftMeanS: number;
  readonly waitingMean: number;
}

export interface Preset {
  readonly name: string;
  readonly source: string;
  readonly workers: number;
  readonly flavor: 'vllm' | 'sglang';
  readonly engine: Partial<EngineParams>;
  readonly workload: Omit<B2bSaasOptions, 'seed'>;
  readonly kvEventDelayMs: number;
  readonly arms: readonly PresetArm[];
  /** The peer's table, by its arm name. */
  readonly published: Readonly<Record<string, PublishedRow>>;
}

/**
 * BLIS's step fit for Llama-3.1-8B on one H100 (src/sim/engine-params.ts) scaled so one
 * pod's peak prefill is 20,480 tokens/s, the figure llm-d's token-load runs on these
 * pods used (docs/bench.md §Presets): 1 / 20,480 s over β1's 17.25 µs.
 */
const STEP_SCALE = 1000 / 20_480 / 0.01725;

/**
 * llm-d's b2b-saas benchmark as published (docs/bench.md §Presets): every value here was
 * fixed before the preset first ran.
 */
export const B2B_SAAS: Preset = {
  name: 'b2b-saas',
  source: 'llm-d blog "KV-Cache Wins You Can See" (2025-09-24), llm-d-kv-cache-manager benchmarking/73-capacity',
  workers: 8,
  flavor: 'vllm',
  engine: {
    kvBlocks: 307_328 / 16,
    blockSize: 16,
    maxNumBatchedTokens: 8192,
    longPrefillTokenThreshold: 0,
    maxRunning: 256,
    // vLLM has no waiting-queue cap.
    maxQueued: 1_000_000,
    beta0Ms: 5.7527 * STEP_SCALE,
    beta1Ms: 0.01725 * STEP_SCALE,
    beta2Ms: 0.006 * STEP_SCALE,
  },
  workload: {
    groups: 150,
    promptsPerGroup: 5,
    systemLen: 6000,
    questionLen: 1200,
    outputLen: 1000,
    stages: [3, 6, 10, 15, 20, 30, 40, 50, 60].map((rate) => ({ rate, durationS: 40 })),
    blockTokens: 400,
  },
  kvEventDelayMs: 1,
  arms: [
    { letter: 'A', peer: 'random', label: 'random', config: { policy: 'random' }, prefixSource: 'requests' },
    { letter: 'B', peer: 'load-aware', label: 'power_of_n', config: { policy: 'power_of_n' }, prefixSource: 'requests' },
    {
      letter: 'C',
      peer: 'approximate (router-side)',
      label: 'cache_aware, requests index',
      config: { policy: 'cache_aware', prefixSource: 'requests' },
      prefixSource: 'requests',
    },
    {
      letter: 'D',
      peer: 'precise (KV events)',
      label: 'cache_aware, events index',
      config: { policy: 'cache_aware', prefixSource: 'events' },
      prefixSource: 'events',
    },
    {
      letter: 'E',
      peer: null,
      label: 'cache_aware, events index, --worker-queue-limit 6',
      config: { policy: 'cache_aware', prefixSource: 'events', workerQueueLimit: 6 },
      prefixSource: 'events',
    },
  ],
  published: {
    'precise (KV events)': { outputTokensPerS: 8730, ttftP90S: 0.542, ttftMeanS: 0.298, waitingMean: 0.1 },
    'approximate (router-side)': { outputTokensPerS: 6944, ttftP90S: 31.08, ttftMeanS: 13.3, waitingMean: 8.1 },
    'load-aware': { outputTokensPerS: 4429, ttftP90S: 94.87, ttftMeanS: 47.0, waitingMean: 28.9 },
    random: { outputTokensPerS: 4429, ttftP90S: 92.55, ttftMeanS: 45.3, waitingMean: 27.3 },
  },
};

export const PRESETS: Readonly<Record<string, Preset>> = { 'b2b-saas': B2B_SAAS };
