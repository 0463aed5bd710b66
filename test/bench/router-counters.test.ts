import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { counterDelta, readRouterCounters } from '../../src/bench/router-counters.js';
import { snapshotFromPrometheus } from '../../src/fleet/index.js';

const before = `# TYPE sgl_router_requests_total counter
sgl_router_requests_total{route="/v1/chat/completions",method="POST"} 10
# TYPE sgl_router_cache_aware_decisions_total counter
sgl_router_cache_aware_decisions_total{model_id="m",decision="cache_hit"} 5
sgl_router_cache_aware_decisions_total{model_id="m",decision="cache_miss"} 2
sgl_router_cache_aware_decisions_total{model_id="m",decision="cache_worker_queued"} 0
sgl_router_cache_aware_decisions_total{model_id="m",decision="all_queued"} 0
# TYPE sgl_router_diverted_overlap_blocks histogram
sgl_router_diverted_overlap_blocks_bucket{model_id="m",le="1"} 0
sgl_router_diverted_overlap_blocks_bucket{model_id="m",le="+Inf"} 0
sgl_router_diverted_overlap_blocks_sum{model_id="m"} 0
sgl_router_diverted_overlap_blocks_count{model_id="m"} 0
# TYPE sgl_router_policy_decisions_total counter
sgl_router_policy_decisions_total{policy="cache_aware",reason="cache_candidate"} 5
`;

const after = `# TYPE sgl_router_requests_total counter
sgl_router_requests_total{route="/v1/chat/completions",method="POST"} 40
# TYPE sgl_router_cache_aware_decisions_total counter
sgl_router_cache_aware_decisions_total{model_id="m",decision="cache_hit"} 25
sgl_router_cache_aware_decisions_total{model_id="m",decision="cache_miss"} 4
sgl_router_cache_aware_decisions_total{model_id="m",decision="cache_worker_queued"} 6
sgl_router_cache_aware_decisions_total{model_id="m",decision="all_queued"} 1
# TYPE sgl_router_diverted_overlap_blocks histogram
sgl_router_diverted_overlap_blocks_bucket{model_id="m",le="128"} 2
sgl_router_diverted_overlap_blocks_bucket{model_id="m",le="256"} 6
sgl_router_diverted_overlap_blocks_bucket{model_id="m",le="+Inf"} 6
sgl_router_diverted_overlap_blocks_sum{model_id="m"} 1100
sgl_router_diverted_overlap_blocks_count{model_id="m"} 6
# TYPE sgl_router_queue_gate_rejected_total counter
sgl_router_queue_gate_rejected_total{model_id="m",worker="http://a"} 7
sgl_router_queue_gate_rejected_total{model_id="m",worker="http://b"} 3
# TYPE sgl_router_policy_selection_failures_total counter
sgl_router_policy_selection_failures_total{policy="cache_aware",reason="prefill_admission_exhausted"} 2
# TYPE sgl_router_policy_decisions_total counter
sgl_router_policy_decisions_total{policy="cache_aware",reason="cache_candidate"} 25
sgl_router_policy_decisions_total{policy="cache_aware",reason="no_cache_candidate"} 10
`;

describe('router counters from /metrics', () => {
  it('reads decisions, diversions, gate rejections and failures', () => {
    const c = readRouterCounters(after)!;
    expect(c.decisions).toEqual({ cache_hit: 25, cache_miss: 4, cache_worker_queued: 6, all_queued: 1 });
    expect(c).toMatchObject({ diverted: 6, diverted_blocks: 1100, gate_rejections: 10, selection_failures: 2, partial_diversions: 0 });
    expect(c.policy_reasons).toEqual({ cache_candidate: 25, no_cache_candidate: 10 });
  });

  it('gives what happened between two scrapes', () => {
    const d = counterDelta(readRouterCounters(before), readRouterCounters(after)!);
    expect(d.decisions).toEqual({ cache_hit: 20, cache_miss: 2, cache_worker_queued: 6, all_queued: 1 });
    expect(d.policy_reasons).toEqual({ cache_candidate: 20, no_cache_candidate: 10 });
    expect(d.diverted).toBe(6);
  });

  it('finds OpenMetrics-style counter families too', () => {
    const om =
      '# TYPE sgl_router_cache_aware_decisions counter\nsgl_router_cache_aware_decisions_total{model_id="m",decision="cache_hit"} 3\n# EOF\n';
    expect(readRouterCounters(om)!.decisions.cache_hit).toBe(3);
  });

  it('is undefined for an engine or anything that is not a router', () => {
    expect(readRouterCounters('# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs 3\n')).toBeUndefined();
    expect(readRouterCounters('<html>nope</html>')).toBeUndefined();
  });
});

describe('bench and the console read a router page alike', () => {
  it.each([
    ['the Rust sgl-router', '../prometheus/fixtures/sgl-router-metrics.txt'],
    ['routerctl', '../tui/fixtures/routerctl-metrics.txt'],
  ])('%s', (_name, path) => {
    const text = readFileSync(new URL(path, import.meta.url), 'utf8');
    const c = readRouterCounters(text)!;
    const s = snapshotFromPrometheus(text);
    expect(c.decisions).toEqual(s.decisions);
    expect(c.diverted).toBe(s.diverted!.count);
    expect(c.diverted_blocks).toBe(s.diverted!.sum);
    expect(c.selection_failures).toBe(s.selectionFailuresTotal);
    expect(c.gate_rejections).toBe(s.gateRejectionsTotal ?? 0);
    expect(c.partial_diversions).toBe(s.partialDiversionsTotal ?? 0);
  });
});
