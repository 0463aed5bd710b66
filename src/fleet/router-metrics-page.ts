import { histogramSeries, parsePrometheusText } from '../prometheus/index.js';
import type { ParsedFamily, ParsedSample } from '../prometheus/index.js';
import { DECISIONS, METRIC_NAMES, ROUTER_METRIC_PREFIX } from '../contract/index.js';
import type { Decision, MetricName } from '../contract/index.js';
import type { Histogram } from './view-model.js';

/**
 * The same facts under other routers' names: the classic sgl-router (before its
 * metrics were renamed, per-worker series labelled `worker`), the Shepherd Model
 * Gateway (`smg_*`) and the vLLM router (`vllm_router_*`, the classic router's names
 * under its own prefix); docs/metrics-and-admin.md §Other routers' metrics. A family
 * is read under its routerctl name first, then under these, in order.
 */
const ALIASES: Partial<Record<MetricName, readonly string[]>> = {
  [METRIC_NAMES.workerInflight]: ['sgl_router_running_requests', 'smg_worker_requests_active', 'vllm_router_running_requests'],
  [METRIC_NAMES.workerHealth]: ['smg_worker_health', 'vllm_router_worker_health'],
  [METRIC_NAMES.workerBreakerState]: ['sgl_router_cb_state', 'smg_worker_cb_state', 'vllm_router_cb_state'],
  [METRIC_NAMES.workerWaiting]: ['smg_engine_waiting_requests'],
  [METRIC_NAMES.workerRequests]: [
    'sgl_router_processed_requests_total',
    'smg_worker_requests_total',
    'vllm_router_processed_requests_total',
  ],
  [METRIC_NAMES.requests]: ['smg_router_requests_total', 'vllm_router_requests_total'],
  [METRIC_NAMES.requestDuration]: [
    'smg_router_request_duration_seconds',
    'sgl_router_generate_duration_seconds',
    'vllm_router_generate_duration_seconds',
  ],
  [METRIC_NAMES.ttft]: ['smg_router_ttft_seconds'],
  [METRIC_NAMES.policyDecisions]: ['smg_worker_selection_total', 'vllm_router_policy_decisions_total'],
};

/** Engine-reported running requests per worker and DP rank: only the model gateway re-exports them. */
export const ENGINE_RUNNING_FAMILY = 'smg_engine_running_requests';
/** Engine-reported KV token usage (a share) per worker and DP rank: the model gateway's. */
export const ENGINE_TOKEN_USAGE_FAMILY = 'smg_engine_token_usage';

/** Prefixes of the routers whose pages are read: routerctl's and the Rust router's, the model gateway's, the vLLM router's. */
const ROUTER_PREFIXES = [ROUTER_METRIC_PREFIX, 'smg_', 'vllm_router_'];

/** Which router wrote a page, by the names it uses. */
export type RouterDialect = 'sgl-router' | 'sgl-router-classic' | 'smg' | 'vllm-router';

/** Why a /metrics page is not a router's, for the one-line error. */
export class NotARouterMetricsError extends Error {
  constructor(readonly looksLike: 'sglang-engine' | 'vllm-engine' | 'other') {
    super(
      looksLike === 'sglang-engine'
        ? "this is an SGLang engine's /metrics (sglang: names), not a router's; point --url at the router (a vLLM router answers /metrics on its serving port with an engine's page: point --url at its --prometheus-port)"
        : looksLike === 'vllm-engine'
          ? "this is a vLLM engine's /metrics (vllm: names), not a router's; point --url at the router (a vLLM router answers /metrics on its serving port with an engine's page: point --url at its --prometheus-port)"
          : `its /metrics has no ${ROUTER_METRIC_PREFIX}*, smg_* or vllm_router_* metrics`,
    );
    this.name = 'NotARouterMetricsError';
  }
}

/**
 * One router's /metrics page, read by the rules every reader of it shares: the
 * console's snapshot and bench's run counters both go through here, so they cannot
 * disagree on what a page says (docs/metrics-and-admin.md §Metric families). It reads
 * the Rust sgl-router's page as well as routerctl's, and a family the page lacks
 * comes out as null rather than zero, so a caller can tell "not exported" from "none".
 */
export class RouterMetricsPage {
  private constructor(private readonly fams: Map<string, ParsedFamily>) {}

  /** Throws NotARouterMetricsError when no family carries the router prefix. */
  static parse(text: string): RouterMetricsPage {
    const fams = parsePrometheusText(text);
    const names = [...fams.keys()];
    if (!names.some((n) => ROUTER_PREFIXES.some((p) => n.startsWith(p)))) {
      throw new NotARouterMetricsError(
        names.some((n) => n.startsWith('sglang:')) ? 'sglang-engine' : names.some((n) => n.startsWith('vllm:')) ? 'vllm-engine' : 'other',
      );
    }
    return new RouterMetricsPage(fams);
  }

  has(name: MetricName): boolean {
    return this.family(name) !== undefined;
  }

  /**
   * Which router wrote the page: the model gateway's `smg_*` names, the vLLM router's
   * `vllm_router_*`, the classic
   * router's per-worker `sgl_router_cb_state` / `sgl_router_running_requests`, or the
   * Rust router's (and routerctl's) current ones.
   */
  dialect(): RouterDialect {
    if ([...this.fams.keys()].some((n) => n.startsWith('smg_'))) return 'smg';
    if ([...this.fams.keys()].some((n) => n.startsWith('vllm_router_'))) return 'vllm-router';
    if (
      this.fams.has('sgl_router_cb_state') ||
      this.fams.has('sgl_router_running_requests') ||
      this.fams.has('sgl_router_processed_requests_total')
    )
      return 'sgl-router-classic';
    return 'sgl-router';
  }

  /** Value samples of a family by its own name (one no routerctl name stands for). */
  foreign(name: string): ParsedSample[] {
    return valuesOf(this.fams.get(name));
  }

  /** The family's value samples: not buckets, sums, counts or `_created`. */
  values(name: MetricName): ParsedSample[] {
    return valuesOf(this.family(name));
  }

  /** Sum of the value samples; null when the page has none. */
  total(name: MetricName): number | null {
    const v = this.values(name);
    return v.length === 0 ? null : v.reduce((a, s) => a + s.value, 0);
  }

  /** Value-sample sums by the value of one label, in order of first appearance; samples without it are left out. */
  totalsBy(name: MetricName, label: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.values(name)) {
      const k = s.labels[label];
      if (k !== undefined) out.set(k, (out.get(k) ?? 0) + s.value);
    }
    return out;
  }

  /** Values a label takes anywhere in the family, histogram buckets included. */
  labelValues(name: MetricName, label: string): string[] {
    const seen = new Set<string>();
    for (const s of this.family(name)?.samples ?? []) {
      const v = s.labels[label];
      if (v !== undefined) seen.add(v);
    }
    return [...seen];
  }

  /**
   * The cache-aware decisions summed over model_id, the one fleet both readers show;
   * null when not exported. The classic router counts only hits and misses (it has no
   * queue gate, so it never diverts): those, with no queued decisions.
   */
  decisions(): Record<Decision, number> | null {
    if (!this.has(METRIC_NAMES.cacheDecisions)) {
      const hits = valuesOf(this.fams.get('sgl_router_cache_hits_total') ?? this.fams.get('sgl_router_cache_hits'));
      const misses = valuesOf(this.fams.get('sgl_router_cache_misses_total') ?? this.fams.get('sgl_router_cache_misses'));
      if (hits.length === 0 && misses.length === 0) return null;
      const sum = (xs: ParsedSample[]): number => xs.reduce((a, s) => a + s.value, 0);
      return { cache_hit: sum(hits), cache_miss: sum(misses), cache_worker_queued: 0, all_queued: 0 };
    }
    const out = Object.fromEntries(DECISIONS.map((d) => [d, 0])) as Record<Decision, number>;
    for (const s of this.values(METRIC_NAMES.cacheDecisions)) {
      const d = s.labels.decision as Decision | undefined;
      if (d !== undefined && d in out) out[d] += s.value;
    }
    return out;
  }

  /** A histogram summed over its series (one per model_id); null when not exported. */
  histogram(name: MetricName): Histogram | null {
    const f = this.family(name);
    if (!f) return null;
    const byLe = new Map<number, number>();
    let count = 0;
    let sum = 0;
    for (const h of histogramSeries(f)) {
      for (const b of h.buckets) if (Number.isFinite(b.le)) byLe.set(b.le, (byLe.get(b.le) ?? 0) + b.count);
      if (Number.isFinite(h.count)) count += h.count;
      if (Number.isFinite(h.sum)) sum += h.sum;
    }
    return { buckets: [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c })), count, sum };
  }

  /** The standard client-library gauge, when the router's runtime exports it (the Rust router does). */
  processStartTimeS(): number | null {
    const v = valuesOf(this.fams.get('process_start_time_seconds'));
    return v.length === 0 ? null : v.reduce((a, s) => a + s.value, 0);
  }

  /** Under its own name, else another router's (ALIASES). */
  private family(name: string): ParsedFamily | undefined {
    const own = this.byName(name);
    if (own) return own;
    for (const alias of ALIASES[name as MetricName] ?? []) {
      const f = this.byName(alias);
      if (f) return f;
    }
    return undefined;
  }

  /** A counter may be exposed as `x_total` (0.0.4) or as family `x` with `x_total` samples (OpenMetrics). */
  private byName(name: string): ParsedFamily | undefined {
    return this.fams.get(name) ?? (name.endsWith('_total') ? this.fams.get(name.slice(0, -6)) : undefined);
  }
}

function valuesOf(f: ParsedFamily | undefined): ParsedSample[] {
  if (!f) return [];
  return f.samples.filter((s) => s.name === f.name || s.name === `${f.name}_total`);
}
