import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../src/prometheus/index.js';
import { createLogger } from '../../src/router/logging/logger.js';
import { RouterMetrics } from '../../src/router/metrics/index.js';
import { SelectionBooker } from '../../src/router/metrics/selection-booker.js';
import { queueGate } from '../../src/router/policies/index.js';
import type { SelectionOutcome } from '../../src/router/policies/index.js';

const CACHE_AWARE_FAMILIES = [
  'sgl_router_cache_aware_decisions_total',
  'sgl_router_diverted_overlap_blocks',
  'sgl_router_queue_gate_rejected_total',
  'sgl_router_partial_diversions_total',
  'sgl_router_queue_gate_inert',
  'sgl_router_cache_admission_evaluated_total',
  'sgl_router_cache_pressure_guard_compared_total',
  'sgl_router_cache_monitor_decisions_total',
];

function metrics(cacheAware: boolean): RouterMetrics {
  return new RouterMetrics({
    modelId: 'm',
    cacheAware,
    workers: () => [],
    queueGateInert: () => false,
    prefixIndexBlocks: () => 0,
    prefixIndexEvictions: () => 0,
  });
}

describe('cache-aware series', () => {
  it.each([
    ['cache_aware exports them, zero decisions included', true],
    ['other policies do not, so no zero decision reads like a working gate', false],
  ])('%s', (_name, cacheAware) => {
    const families = parsePrometheusText(metrics(cacheAware).render());
    for (const name of CACHE_AWARE_FAMILIES) expect(families.has(name), name).toBe(cacheAware);
    for (const name of ['sgl_router_policy_decisions_total', 'sgl_router_retries_total', 'sgl_router_prefix_index_blocks'])
      expect(families.has(name), name).toBe(true);
    if (cacheAware)
      expect(
        families
          .get('sgl_router_cache_aware_decisions_total')!
          .samples.map((s) => s.labels.decision)
          .sort(),
      ).toEqual(['all_queued', 'cache_hit', 'cache_miss', 'cache_worker_queued']);
  });
});

describe('saturation-pin log line', () => {
  it('carries the limit and floor in force', () => {
    const lines: string[] = [];
    const booker = new SelectionBooker(
      metrics(true),
      createLogger('json', (l) => lines.push(l)),
      'cache_aware',
      () => 'm',
      queueGate({ workerQueueLimit: 4, saturationQueueFloor: 2 }),
    );
    const pin = {
      ok: true,
      worker: { id: 'http://w1', slot: 0, inflight: 0 },
      backup: undefined,
      reason: 'saturation_pin',
      cacheAware: { decision: 'all_queued' },
    } as SelectionOutcome;
    booker.book(pin, 3);
    booker.book(pin, 3); // sampled 1 in 64: one line
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'info',
      worker: 'http://w1',
      worker_queue_limit: 4,
      saturation_queue_floor: 2,
      model: 'm',
    });
  });
});
