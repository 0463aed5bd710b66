import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logging/logger.js';
import { outcomeFromStatus } from '../metrics/index.js';
import type { RouterMetrics } from '../metrics/index.js';
import type { SelectionSuccess } from '../policies/index.js';
import type { InferenceRequest } from '../request/inference-request.js';
import { ApiError, ApiErrors } from '../server/api-error.js';
import type { LoadTable } from '../state/load_monitor/index.js';
import type { PrefixIndex } from '../state/prefix_index/index.js';
import type { Worker } from '../workers/worker.js';
import { forward } from './forward.js';
import type { ForwardOutcome } from './forward.js';

export interface DispatcherDeps {
  table: LoadTable;
  index: PrefixIndex;
  metrics: RouterMetrics;
  log: Logger;
  timeoutMs: number;
  model: () => string;
}

/**
 * Takes a selected worker to a finished response: records the prefix as sent,
 * counts the request in flight, relays it, settles the breaker and the worker
 * metrics, and retries once elsewhere when nothing reached the client yet.
 */
export class Dispatcher {
  private retryCursor = 0;

  constructor(private readonly deps: DispatcherDeps) {}

  /**
   * Send to the chosen worker; if it refuses before any byte reached the client,
   * try once more on another (the request was booked once, at selection).
   */
  async dispatch(
    selection: SelectionSuccess,
    parsed: InferenceRequest,
    body: Buffer,
    path: string,
    req: IncomingMessage,
    res: ServerResponse,
    started: number,
  ): Promise<void> {
    let worker = selection.worker as Worker;
    for (let attempt = 0; attempt < 2; attempt++) {
      const mayRetry = attempt === 0;
      const now = performance.now();
      if (!worker.breaker.acquire(now)) {
        const next = mayRetry ? this.retryTarget(selection, worker) : undefined;
        if (!next) throw ApiErrors.noHealthyWorkers();
        this.deps.metrics.retries.inc(['breaker_open']);
        worker = next;
        continue;
      }
      this.deps.index.record(worker.slot, parsed.prefixHashes);
      worker.inflight++;
      worker.requestsTotal++;
      let outcome: ForwardOutcome;
      try {
        outcome = await forward(worker, req, res, { path, body, timeoutMs: this.deps.timeoutMs, mayRetry });
      } finally {
        worker.inflight--;
      }
      const model = this.deps.model();
      switch (outcome.kind) {
        case 'relayed': {
          this.settleBreaker(worker, outcome.status, now);
          if (outcome.midStreamError) worker.breaker.failure(performance.now());
          this.deps.metrics.workerRequests.inc([worker.url, model, 'plain', outcome.midStreamError ? 'error' : outcomeFromStatus(outcome.status)]);
          if (outcome.streamed) {
            this.deps.metrics.streamOutcomes.inc([worker.url, model, outcome.midStreamError ? 'upstream_error' : 'ok']);
            if (!outcome.midStreamError && outcome.status === 200 && outcome.firstByteAt !== undefined) {
              this.deps.metrics.ttft.observe([model], (outcome.firstByteAt - started) / 1000);
            }
          }
          this.deps.metrics.duration.observe([model], (performance.now() - started) / 1000);
          return;
        }
        case 'cancelled':
          worker.breaker.release();
          this.deps.metrics.workerRequests.inc([worker.url, model, 'plain', 'cancelled']);
          if (parsed.stream) this.deps.metrics.streamOutcomes.inc([worker.url, model, 'client_disconnect']);
          return;
        case 'failed':
          worker.breaker.failure(performance.now());
          this.deps.metrics.workerRequests.inc([worker.url, model, 'plain', 'error']);
          throw outcome.reason === 'timeout' ? ApiErrors.upstreamTimeout() : ApiErrors.upstreamUnreachable();
        case 'retryable': {
          if (outcome.status === undefined) worker.breaker.failure(performance.now());
          else this.settleBreaker(worker, outcome.status, now);
          this.deps.metrics.workerRequests.inc([worker.url, model, 'plain', outcome.status === undefined ? 'error' : outcomeFromStatus(outcome.status)]);
          const next = this.retryTarget(selection, worker);
          if (!next) {
            throw outcome.status === undefined ? ApiErrors.upstreamUnreachable() : new ApiError(outcome.status === 429 || outcome.status === 503 ? 503 : 502, outcome.status === 429 || outcome.status === 503 ? 'service_overloaded' : 'upstream_unreachable', 'upstream worker failed and no other worker could take the request');
          }
          this.deps.metrics.retries.inc([outcome.status === undefined ? 'connect' : `status_${outcome.status}`]);
          this.deps.log.debug('retrying on another worker', { from: worker.url, to: next.url, reason: outcome.reason });
          worker = next;
          continue;
        }
      }
    }
  }

  private settleBreaker(worker: Worker, status: number, now: number): void {
    if (status === 429 || status === 503) worker.breaker.backpressure();
    else if (status >= 500) worker.breaker.failure(now);
    else worker.breaker.success();
  }

  /** Another routable worker: the selection's backup, else the next one in pool order. */
  private retryTarget(selection: SelectionSuccess, failed: Worker): Worker | undefined {
    const now = performance.now();
    const backup = selection.backup as Worker | undefined;
    if (backup && backup !== failed && backup.breaker.wouldAllow(now) && this.deps.table.isInPool(backup)) return backup;
    const pool = this.deps.table.view(now).workers;
    for (let i = 0; i < pool.length; i++) {
      const w = pool[this.retryCursor++ % pool.length] as Worker;
      if (w !== failed && w.breaker.wouldAllow(now)) return w;
    }
    return undefined;
  }
}
