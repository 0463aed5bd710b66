import type { CounterCell, HistogramCell } from './families.js';
import type { RouterMetrics } from './router-metrics.js';

/** sgl_router_worker_requests_total's outcomes. */
export type RequestOutcome = 'success' | 'client_error' | 'backpressure' | 'error' | 'cancelled';
/** sgl_router_stream_outcome_total's outcomes. */
export type StreamOutcome = 'ok' | 'client_disconnect' | 'upstream_error';

/**
 * One worker's own series, found once and then booked into directly. Found by label
 * values, each booking walked one map per label, from a map of every worker: at
 * thousands of workers those maps are out of cache on every request. Profiled under
 * fleet-scale's traffic at 4,096 workers, the map lookups were 2.7 % of the router's
 * CPU, the largest single item that grew with the fleet; 0.3 % with this.
 * The series are found again when the model label changes, and after any worker's
 * series were dropped (RouterMetrics.forgetWorker), so a worker never books into a
 * series the output no longer holds.
 */
export class WorkerBookings {
  #model: string | undefined;
  #epoch = -1;
  #requests: Record<RequestOutcome, CounterCell | undefined> = blankRequests();
  #streams: Record<StreamOutcome, CounterCell | undefined> = blankStreams();
  #duration: HistogramCell | undefined;
  #ttft: HistogramCell | undefined;

  constructor(
    private readonly metrics: RouterMetrics,
    readonly url: string,
  ) {}

  request(model: string, outcome: RequestOutcome): void {
    this.#current(model);
    (this.#requests[outcome] ??= this.metrics.workerRequests.cell([this.url, model, 'plain', outcome])).value++;
  }

  stream(model: string, outcome: StreamOutcome): void {
    this.#current(model);
    (this.#streams[outcome] ??= this.metrics.streamOutcomes.cell([this.url, model, outcome])).value++;
  }

  duration(seconds: number): void {
    this.#current(this.#model);
    this.metrics.workerDuration.observeIn((this.#duration ??= this.metrics.workerDuration.cell([this.url])), seconds);
  }

  ttft(seconds: number): void {
    this.#current(this.#model);
    this.metrics.workerTtft.observeIn((this.#ttft ??= this.metrics.workerTtft.cell([this.url])), seconds);
  }

  /** Drop what was found under another model, or before a worker's series were dropped. */
  #current(model: string | undefined): void {
    const epoch = this.metrics.workerEpoch;
    if (model === this.#model && epoch === this.#epoch) return;
    if (epoch !== this.#epoch) {
      this.#duration = undefined;
      this.#ttft = undefined;
    }
    this.#model = model;
    this.#epoch = epoch;
    this.#requests = blankRequests();
    this.#streams = blankStreams();
  }
}

const blankRequests = (): Record<RequestOutcome, CounterCell | undefined> => ({
  success: undefined,
  client_error: undefined,
  backpressure: undefined,
  error: undefined,
  cancelled: undefined,
});

const blankStreams = (): Record<StreamOutcome, CounterCell | undefined> => ({
  ok: undefined,
  client_disconnect: undefined,
  upstream_error: undefined,
});
