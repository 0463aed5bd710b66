import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES, ROUTER_METRIC_PREFIX } from '../../src/contract/index.js';
import { parsePrometheusText } from '../../src/prometheus/index.js';
import { RouterMetrics } from '../../src/router/metrics/index.js';

/** Every family a router can render: cache_aware, with a worker that has load data and a failed poll. */
function fullPage(): string {
  return new RouterMetrics({
    modelId: 'm',
    cacheAware: true,
    epp: true,
    workers: () => [
      {
        url: 'http://w1',
        inflight: 1,
        healthy: true,
        breakerState: 0,
        waiting: 2,
        sampleAgeSeconds: 0.1,
        loadPollFailures: { timeout: 1, connect: 0, http_status: 0, unreadable: 0, too_large: 0 },
      },
    ],
    queueGateInert: () => false,
    prefixIndexBlocks: () => 0,
    prefixIndexEvictions: () => 0,
    heldRequests: () => 0,
  }).render();
}

describe('the metric family names, router to console and bench', () => {
  it('are exactly the families the router renders, in its order', () => {
    expect([...parsePrometheusText(fullPage()).keys()]).toEqual(Object.values(METRIC_NAMES));
  });

  it('all carry the router prefix readers recognise a router by', () => {
    for (const name of Object.values(METRIC_NAMES)) expect(name.startsWith(ROUTER_METRIC_PREFIX), name).toBe(true);
  });

  it('are documented, each in a table row of docs/metrics-and-admin.md §Metric families', () => {
    const doc = readFileSync(new URL('../../docs/metrics-and-admin.md', import.meta.url), 'utf8');
    for (const name of Object.values(METRIC_NAMES)) expect(doc, name).toContain(`| \`${name}\` |`);
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(METRIC_NAMES)).toBe(true);
  });
});
