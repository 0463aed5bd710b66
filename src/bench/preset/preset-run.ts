import { defaultConfig } from '../../config/index.js';
import { runTraceVirtual } from '../../virtual/index.js';
import { b2bSaasTrace } from '../../workload/index.js';
import type { TraceRequest } from '../../workload/index.js';
import { percentiles } from '../percentiles.js';
import type { Preset, PresetArm, PublishedRow } from './b2b-saas.js';

/** One arm's figures in the peer's columns, and the run's own beside them. */
export interface PresetArmResult {
  letter: string;
  label: string;
  peer: string | null;
  requests: number;
  finished: number;
  refused: number;
  output_tokens_per_s: number | null;
  ttft_p90_s: number | null;
  ttft_mean_s: number | null;
  waiting_mean: number | null;
  cached_token_ratio: number | null;
  /** Share of the arm's requests with a first token within 2 s: the goodput the gate's comparisons rank by (docs/routing.md §Gate modes). */
  goodput_2s: number | null;
  /** Requests `--admission slo` answered 429 (misses in goodput_2s). */
  shed: number;
  /** The same share over the requests not shed. */
  goodput_admitted_2s: number | null;
  published: PublishedRow | null;
}

export interface PresetResult {
  preset: string;
  source: string;
  seed: number;
  requests: number;
  workers: number;
  kv_event_delay_ms: number;
  arms: PresetArmResult[];
}

/**
 * Every arm of a preset on the virtual clock, same trace, same fleet, same seed
 * (docs/bench.md §Presets). Deterministic: the same preset and seed give the same figures.
 */
export function runPreset(preset: Preset, seed: number, onArm?: (arm: PresetArmResult) => void): PresetResult {
  const trace = b2bSaasTrace({ ...preset.workload, seed });
  const arms = preset.arms.map((arm) => {
    const r = runPresetArm(preset, arm, trace, seed);
    onArm?.(r);
    return r;
  });
  return {
    preset: preset.name,
    source: preset.source,
    seed,
    requests: trace.length,
    workers: preset.workers,
    kv_event_delay_ms: preset.kvEventDelayMs,
    arms,
  };
}

function runPresetArm(preset: Preset, arm: PresetArm, trace: readonly TraceRequest[], seed: number): PresetArmResult {
  let waiting = 0;
  let samples = 0;
  const r = runTraceVirtual({
    config: { ...defaultConfig(), ...arm.config },
    workers: preset.workers,
    engine: preset.engine,
    flavor: preset.flavor,
    seed,
    trace,
    traceBlockSize: preset.workload.blockTokens,
    prefixSource: arm.prefixSource,
    kvEventDelayMs: preset.kvEventDelayMs,
    onReading: (_now, _engine, readings) => {
      for (const [, reading] of readings) waiting += reading.waiting;
      samples++;
    },
  });
  const { p90, mean } = percentiles(r.ttftMs);
  const good = r.ttftMs.filter((t) => t <= 2000).length;
  return {
    letter: arm.letter,
    label: arm.label,
    peer: arm.peer,
    requests: r.requests,
    finished: r.finished,
    refused: r.refused,
    output_tokens_per_s: r.spanS > 0 ? r.outputTokens / r.spanS : null,
    ttft_p90_s: p90 === null ? null : p90 / 1000,
    ttft_mean_s: mean === null ? null : mean / 1000,
    waiting_mean: samples > 0 ? waiting / samples : null,
    cached_token_ratio: r.promptTokens > 0 ? r.cachedTokens / r.promptTokens : null,
    goodput_2s: r.requests > 0 ? good / r.requests : null,
    shed: r.shed,
    goodput_admitted_2s: r.requests > r.shed ? good / (r.requests - r.shed) : null,
    published: arm.peer === null ? null : (preset.published[arm.peer] ?? null),
  };
}
