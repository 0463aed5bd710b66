import type { RouterConfig } from '../../../config/index.js';
import type { Logger } from '../../logging/logger.js';
import type { QueueGate } from '../../policies/index.js';
import { LoadPush } from './load-push.js';
import { LoadSampler } from './load-sampler.js';
import { LoadTable } from './load-table.js';

export interface LoadMonitor {
  readonly table: LoadTable;
  /** Load pushed by engines that publish LoadStat (docs/engine-load.md §Load by push). */
  readonly push: LoadPush;
  /** Load polled from the others, and from any whose push went quiet. */
  readonly sampler: LoadSampler;
}

/** The load table, counted against the router's queue gate, and its two feeds, as the config sets them. */
export function loadMonitor(
  c: Pick<RouterConfig, 'loadFreshnessMs' | 'loadPollIntervalMs' | 'loadTimeoutMs'>,
  gate: QueueGate,
  log: Logger,
  now: () => number,
): LoadMonitor {
  const table = new LoadTable(c.loadFreshnessMs);
  table.setGate(gate);
  const push = new LoadPush(table, now);
  const sampler = new LoadSampler(table, {
    intervalMs: c.loadPollIntervalMs,
    freshnessMs: c.loadFreshnessMs,
    timeoutMs: c.loadTimeoutMs,
    now,
    pushed: (w) => push.isLive(w),
    onStatus: (w, s) =>
      s.ok
        ? log.info('load sampling ok', { worker: w.url, source: s.source })
        : log.warn('no load sample', { worker: w.url, reason: s.reason }),
  });
  return { table, push, sampler };
}
