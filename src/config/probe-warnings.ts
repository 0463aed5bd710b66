import type { Origin } from './origin.js';
import { problem } from './problem.js';
import type { ConfigProblem } from './problem.js';
import type { WorkerProbe } from './probe.js';
import type { ConfigKey, RouterConfig } from './schema.js';

/**
 * Turn probe facts into predictions. They are warnings, not errors: a worker may be
 * down for a deploy and come back before serve starts, so only `--strict` makes them
 * fail the check.
 */
export function probeWarnings(workers: readonly WorkerProbe[], config: RouterConfig, origins: Partial<Record<ConfigKey, Origin>>): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const at = (key: ConfigKey, flag: string) => ({ flag, origin: origins[key]?.label ?? null });
  const reachable = workers.filter((w) => w.reachable);

  for (const w of workers) {
    if (!w.reachable) out.push(problem('WARN_PROBE_UNREACHABLE', `worker ${w.url} is unreachable: ${w.error ?? 'no answer'}`, at('workerUrls', '--worker-urls')));
  }

  const limit = config.workerQueueLimit;
  if (limit !== null && reachable.length > 0) {
    // A legacy `{"load": N}` proves the engine reports something, but not the waiting
    // queue the gate compares with the limit, so for the gate it is as blind as none.
    const blind = reachable.filter((w) => w.load === null || w.load.waiting === null);
    if (blind.length > 0) {
      const names = blind.map((w) => (w.load === null ? w.url : `${w.url} (legacy /get_load without a queue length)`)).join(', ');
      const message =
        blind.length === reachable.length
          ? `--worker-queue-limit is set but no worker reports load (${names}); the queue gate is inert`
          : `--worker-queue-limit is set but ${blind.length} of ${reachable.length} workers ${blind.length === 1 ? "reports" : "report"} no load (${names}); the gate will admit them blindly`;
      out.push(problem('WARN_PROBE_NO_LOAD', message, at('workerQueueLimit', '--worker-queue-limit')));
    }
    out.push(...dpWarnings(reachable, limit, 'worker-queue-limit', 'limit', at('workerQueueLimit', '--worker-queue-limit')));
    const floor = config.saturationQueueFloor;
    if (floor !== null) out.push(...dpWarnings(reachable, floor, 'saturation-queue-floor', 'floor', at('saturationQueueFloor', '--saturation-queue-floor')));
  }

  for (const w of reachable) {
    const push = w.push;
    if (push?.load === 'silent') {
      out.push(
        problem(
          'WARN_PROBE_PUSH_SILENT',
          `worker ${w.url} advertises a LoadStat channel (${push.endpoints.load.join(', ')}) but nothing arrived within the probe; the router would poll its load instead (check that the port is reachable from here)`,
          at('workerUrls', '--worker-urls'),
        ),
      );
    }
    if (push?.kvEvents && push.blockSize !== null && push.blockSize !== config.blockSize) {
      out.push(
        problem(
          'WARN_PROBE_BLOCK_SIZE',
          `worker ${w.url} publishes KV events in blocks of ${push.blockSize} tokens but --block-size is ${config.blockSize}; set --block-size ${push.blockSize} so the router's blocks line up with the engine's`,
          at('blockSize', '--block-size'),
        ),
      );
    }
  }

  for (const w of reachable) {
    if (w.models === null || w.models.length === 0) {
      out.push(problem('WARN_PROBE_NO_MODELS', `worker ${w.url} answered but /v1/models lists no model; the model cannot be discovered from it`, at('workerUrls', '--worker-urls')));
    }
  }
  const serving = reachable.filter((w): w is WorkerProbe & { models: string[] } => w.models !== null && w.models.length > 0);
  if (config.modelId !== null) {
    for (const w of serving) {
      if (!w.models.includes(config.modelId)) {
        out.push(
          problem('WARN_PROBE_MODEL_MISMATCH', `--model-id ${config.modelId} is not served by ${w.url} (it serves ${w.models.join(', ')})`, at('modelId', '--model-id')),
        );
      }
    }
  } else {
    const distinct = new Set(serving.map((w) => w.models.join(', ')));
    if (distinct.size > 1) {
      const list = serving.map((w) => `${w.url}: ${w.models.join(', ')}`).join('; ');
      out.push(problem('WARN_PROBE_MODEL_MISMATCH', `workers serve different models (${list}); set --model-id to the one to route`, at('workerUrls', '--worker-urls')));
    }
  }
  return out;
}

/** The gate compares the waiting count summed over a worker's DP ranks (docs/engine-load.md §DP ranks). */
function dpWarnings(
  workers: readonly WorkerProbe[],
  threshold: number,
  flag: string,
  noun: string,
  where: { flag: string; origin: string | null },
): ConfigProblem[] {
  const bySize = new Map<number, string[]>();
  for (const w of workers) {
    if (w.dpSize !== null && w.dpSize > 1) bySize.set(w.dpSize, [...(bySize.get(w.dpSize) ?? []), w.url]);
  }
  return [...bySize].map(([dp, urls]) => {
    const perRank = Math.round((threshold / dp) * 100) / 100;
    return problem(
      'WARN_PROBE_DP_SCALE',
      `--${flag} ${threshold} with dp-size ${dp}: the ${noun} applies to the sum over ranks, about ${perRank} waiting per rank (${urls.join(', ')})`,
      where,
    );
  });
}
