import type { Logger } from '../logging/logger.js';
import type { Worker } from '../upstream/worker.js';

/**
 * The model to serve when --model-id is not given: the one most workers list in
 * /v1/models (docs/routing.md §Data path, model check); null when none lists one, and
 * then any model name is accepted.
 */
export function discoverModel(workers: readonly Worker[], log: Logger): string | null {
  const seen = new Map<string, number>();
  for (const w of workers) for (const m of w.info.models) seen.set(m, (seen.get(m) ?? 0) + 1);
  if (seen.size === 0) {
    log.warn('no worker reported a model; requests naming any model are accepted until --model-id is set');
    return null;
  }
  const [model] = [...seen.entries()].sort((a, b) => b[1] - a[1])[0]!;
  if (seen.size > 1) log.warn('workers report different models; serving the most common', { model, models: [...seen.keys()] });
  return model;
}
