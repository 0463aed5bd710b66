import type { GaugeSource } from '../metrics/index.js';
import type { QueueGate } from '../policies/index.js';
import type { KvEventIndex } from '../state/kv-index/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { PrefixIndex } from '../state/prefix-index/index.js';
import type { WorkerRegistry } from '../workers/worker-registry.js';
import type { WorkerStatus } from './worker-status.js';

export interface RouterGaugeDeps {
  readonly modelId: string;
  readonly cacheAware: boolean;
  /** The endpoint picker runs (--epp). */
  readonly epp: boolean;
  readonly status: WorkerStatus;
  readonly registry: WorkerRegistry;
  readonly table: LoadTable;
  readonly gate: QueueGate;
  readonly index: PrefixIndex;
  readonly kvIndex: KvEventIndex;
  /** Requests --admission slo holds now; absent without it. */
  readonly held?: () => number;
}

/**
 * What /metrics reads at scrape time (docs/metrics-and-admin.md): the per-worker
 * gauges from the same readings /admin/state uses, the gate's blindness, the prefix
 * index's size, and each worker's KV event feeds.
 */
export function routerGauges(d: RouterGaugeDeps): GaugeSource {
  return {
    modelId: d.modelId,
    cacheAware: d.cacheAware,
    epp: d.epp,
    workers: () =>
      d.status.readings(performance.now()).map(({ worker: w, fresh, sampleAgeMs, healthy, polls }) => ({
        url: w.url,
        inflight: w.inflight,
        healthy,
        breakerState: w.breaker.state === 'closed' ? 0 : w.breaker.state === 'open' ? 1 : 2,
        waiting: fresh ? fresh.waiting : null,
        sampleAgeSeconds: sampleAgeMs === undefined ? null : sampleAgeMs / 1000,
        prefillTokensPerSecond: w.prefill.current?.tokensPerSecond ?? null,
        loadPollFailures: polls.failures,
      })),
    queueGateInert: () => d.gate.inert(d.table.view(performance.now())),
    ...(d.held !== undefined ? { heldRequests: d.held } : {}),
    prefixIndexBlocks: () => d.index.size,
    prefixIndexEvictions: () => d.index.evictions,
    kvFeeds: () =>
      d.registry.workers.flatMap((w) => {
        const k = d.kvIndex.status(w);
        if (k === undefined) return [];
        const { batches, gapsRepaired, gapsLost, decodeErrors, catchUp } = k.stats;
        return [{ url: w.url, batches, gapsRepaired, gapsLost, decodeErrors, lagSeconds: k.lagSeconds, catchUp }];
      }),
  };
}
