import type { PushInfo } from '../../engines/index.js';
import type { PolicyWorker } from '../policies/types.js';
import { PrefillEstimator } from '../policies/prefill-rate/index.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { UpstreamPool } from './upstream-pool.js';

/** Facts learned about a worker from its own endpoints. */
export interface WorkerInfo {
  /** DP ranks from /server_info, when it says. */
  dpSize: number | undefined;
  models: string[];
  flavor: 'sglang' | 'vllm' | 'unknown';
  /**
   * The engine schedules cache-aware (SGLang --schedule-policy lpm or dfs-weight), so
   * its waiting-uncached tokens are in the right units; SGLang itself withholds that
   * field from routers otherwise. Only then is its load used as native scheduling data.
   */
  nativeScheduling: boolean;
  /**
   * The engine's push channels, when it publishes: from /server_info (SGLang's
   * `kv_events` block), or from a --kv-events entry for engines that do not advertise
   * them (vLLM); an entry wins over what the engine advertises.
   */
  push: PushInfo | null;
  /** Where `push` came from. */
  pushFrom: 'engine' | 'config' | null;
  /** The engine is routerctl's simulator (its KV event hashes are the simulator's). */
  simulated: boolean;
}

/**
 * One upstream engine. Carries the router-local counters the policies and the
 * console read; mutable fields are updated in place on the hot path.
 */
export class Worker implements PolicyWorker {
  readonly id: string;
  readonly url: string;
  readonly slot: number;
  readonly breaker: CircuitBreaker;
  readonly pool: UpstreamPool;
  inflight = 0;
  requestsTotal = 0;
  gateRejectionsTotal = 0;
  /** Its prefill rate as learnt from the requests it served, and the prefill tokens sent it that have not started (docs/routing.md §Learned prefill rate). */
  readonly prefill = new PrefillEstimator();
  /** It left the fleet and its connections are gone (docs/http-edge.md §Membership): a request still bound for it goes elsewhere. */
  removed = false;
  info: WorkerInfo = {
    dpSize: undefined,
    models: [],
    flavor: 'unknown',
    nativeScheduling: false,
    push: null,
    pushFrom: null,
    simulated: false,
  };

  constructor(url: string, slot: number, pool: UpstreamPool, breaker: CircuitBreaker) {
    this.id = url;
    this.url = url;
    this.slot = slot;
    this.pool = pool;
    this.breaker = breaker;
  }
}
