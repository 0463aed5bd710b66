import type { EffectiveSettings } from './check-configurations.js';
import type { Configuration } from './configurations.js';
import { startArmRouter, startSimProcess } from './fleet-processes.js';
import type { FleetShape } from './fleet-shape.js';
import type { ProgressLine } from './progress.js';
import { runAgainst } from './run.js';
import type { BenchRun, RunSettings } from './run.js';

export interface CompareRun extends BenchRun {
  letter: string;
  label: string;
  args: string[];
  settings: EffectiveSettings;
  /** The simulated engines this configuration ran on (gone once the comparison ends). */
  workerUrls: string[];
}

export interface CompareSettings {
  run: RunSettings;
  fleet: FleetShape;
  configs: readonly Configuration[];
  settings: readonly EffectiveSettings[];
}

export interface CompareHooks {
  progress?: ProgressLine;
  signal?: AbortSignal;
  /** One line per finished configuration, for logs. */
  note?: (line: string) => void;
}

/**
 * Run each configuration on its own fresh simulated fleet and router, one after
 * another (two processes at a time on a small machine is plenty), with the same seed
 * and therefore the same arrivals. Both processes are stopped before the next
 * configuration starts, and on any failure.
 */
export async function runComparison(s: CompareSettings, hooks: CompareHooks = {}): Promise<CompareRun[]> {
  const runs: CompareRun[] = [];
  for (const [i, config] of s.configs.entries()) {
    if (hooks.signal?.aborted) break;
    const tag = `${config.letter} ${i + 1}/${s.configs.length}`;
    hooks.progress?.status(`${tag} starting ${s.fleet.workers} simulated engines and a router (${config.label})`);
    const sim = await startSimProcess(s.fleet);
    let router: Awaited<ReturnType<typeof startArmRouter>> | undefined;
    try {
      try {
        router = await startArmRouter(sim.value, config);
      } catch (err) {
        throw new Error(`configuration ${config.letter} (${config.label}): ${(err as Error).message}`, { cause: err });
      }
      const run = await runAgainst(router.value, s.run, { ...hooks, label: tag });
      runs.push({ letter: config.letter, label: config.label, args: config.args, settings: s.settings[i]!, workerUrls: sim.value, ...run });
      const sm = run.summary;
      hooks.note?.(
        `bench: ${config.letter} ${config.label}: ${sm.requests.ok} ok, ${sm.errors.total} failed, ` +
          `p99 TTFT ${sm.ttft_ms.p99 === null ? '-' : Math.round(sm.ttft_ms.p99)} ms, cached ${sm.cache.ratio === null ? '-' : `${Math.round(sm.cache.ratio * 100)}%`}`,
      );
    } finally {
      hooks.progress?.status(`${tag} stopping`);
      await router?.stop();
      await sim.process.stop();
      hooks.progress?.stop();
    }
  }
  return runs;
}

/** Whether every run dispatched the same arrivals (count and digest). */
export function sameArrivals(runs: readonly BenchRun[]): boolean {
  const first = runs[0];
  return runs.every((r) => r.arrivals.digest === first?.arrivals.digest && r.arrivals.count === first.arrivals.count);
}
