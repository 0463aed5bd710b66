/**
 * Native capacity data whatever the engine's schedule policy, uncached-token
 * pressure only under a cache-aware one (docs/engine-load.md, "Capacity and
 * pressure"), end to end: real simulated SGLang engines with --schedule-policy lpm
 * or fcfs (startSimFleet with `params.schedulePolicy`, as `routerctl sim
 * --schedule-policy` starts them), the real router reading their /v1/loads and
 * /server_info.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import type { Router } from '../../src/router/index.js';
import { parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';
import { eventually, post, put, rawRequest } from '../helpers/http.js';
import { startTestRouter, sendChat } from '../helpers/router.js';

const model = 'sim-llama-3.1-8b';
const prompt = (tag: string) => `${tag} `.repeat(3).concat('Shared operations runbook. '.repeat(230));
const EXTRA = 'More context for the deeper owner. '.repeat(40);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = fleet = undefined;
});

async function setup(schedulePolicy: 'lpm' | 'fcfs', sim: Record<string, unknown>, overrides: Partial<RouterConfig> = {}) {
  fleet = await startSimFleet({ workers: 2, portBase: 0, ...sim, params: { schedulePolicy } });
  router = await startTestRouter(fleet.urls, { loadPollIntervalMs: 25, ...overrides });
  return { fleet, router };
}

const send = (r: Router, content: string): Promise<string> => sendChat(r, content, model);

/** Long requests straight to an engine, past the router; they run until the fleet closes. */
function occupy(url: string, tag: string, words: number, maxTokens: number): void {
  const content = Array.from({ length: words }, (_, i) => `${tag}${i}`).join(' ');
  void post(`${url}/v1/chat/completions`, { model, messages: [{ role: 'user', content }], max_tokens: maxTokens, ignore_eos: true }).catch(
    () => undefined,
  );
}

async function counters(r: Router) {
  const m = parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text);
  const get = (name: string, match: (l: Record<string, string>) => boolean = () => true) => sumSamples(m.get(name), match) ?? 0;
  return {
    admissionRejected: get('sgl_router_cache_admission_rejected_total'),
    guardCompared: get('sgl_router_cache_pressure_guard_compared_total'),
    guardOverrides: get('sgl_router_cache_pressure_guard_override_total'),
    cacheMiss: get('sgl_router_cache_aware_decisions_total', (l) => l.decision === 'cache_miss'),
    cacheHit: get('sgl_router_cache_aware_decisions_total', (l) => l.decision === 'cache_hit'),
    source: (s: string) => get('sgl_router_cache_monitor_decisions_total', (l) => l.source === s),
  };
}

const nativeOf = (r: Router, url: string) => {
  const w = r.registry.workers.find((x) => x.url === url)!;
  return r.table.view(performance.now()).native(w);
};

describe('capacity admission and the pressure guard over real HTTP', () => {
  it.each(['lpm', 'fcfs'] as const)(
    'schedule policy %s: capacity admission turns away the prefix owner whose KV is full',
    async (policy) => {
      const { fleet: f, router: r } = await setup(policy, { maxTotalTokens: 8192, speedup: 1 });
      const owner = await send(r, prompt('kv'));
      const other = f.urls.find((u) => u !== owner)!;
      // Fill the owner's KV with a request the router never saw: its reservation
      // (prompt and whole output) leaves less room than the next request needs.
      // ~6,800 prompt tokens pinned, 1,300 more reserved for the output, of 8,192.
      occupy(owner, 'fill', 3400, 1300);
      await eventually(async () => {
        const n = nativeOf(r, owner);
        // The next request brings ~1,550 input tokens (6,200 characters at 4 per token).
        return n !== undefined && n.running === 1 && n.maxTotalTokens - n.totalTokens < 1400;
      }, 8000);
      const before = await counters(r);
      expect(await send(r, prompt('kv'))).toBe(other);
      const after = await counters(r);
      expect(after.admissionRejected - before.admissionRejected).toBe(1);
      // Capacity, not the gate, emptied the candidate set.
      expect(after.cacheMiss - before.cacheMiss).toBe(1);
    },
  );

  it.each([
    ['lpm', 'fires: the less pressured shallower owner wins', true],
    ['fcfs', 'stays off (raw prompt lengths are not pressure): the deeper owner keeps the request', false],
  ] as const)('schedule policy %s: the pressure guard %s', async (policy, _what, fires) => {
    // Slowed down so the deeper owner's prefill backlog lasts a few seconds of real time.
    const { fleet: f, router: r } = await setup(policy, { speedup: 0.2 }, { workerQueueLimit: 4 });
    const base = prompt('guard');
    // Two owners of `base`: divert the second copy off the first with the gate.
    const first = await send(r, base);
    await put(`${first}/sim/load`, { num_waiting_reqs: 4 });
    await eventually(async () => r.state().workers.find((w) => w.url === first)!.gated);
    const second = await send(r, base);
    expect(second).not.toBe(first);
    await put(`${first}/sim/load`, { num_waiting_reqs: null });
    await eventually(async () => !r.state().workers.find((w) => w.url === first)!.gated);
    // The deeper owner holds base + EXTRA; the shallower one only base (within the switch margin).
    const deeper = await send(r, base + EXTRA);
    const shallower = f.urls.find((u) => u !== deeper)!;

    // Prefill pressure on the deeper owner the router did not cause: a ~28,000-token
    // prompt in chunked prefill, two ~4,000-token prompts waiting behind it. Two
    // waiting is under the limit (never gated), and running slots and KV stay free
    // (capacity admits): only the pressure guard can move the request.
    occupy(deeper, 'big', 14000, 10);
    await sleep(100);
    occupy(deeper, 'queued-a', 2000, 10);
    occupy(deeper, 'queued-b', 2000, 10);
    await eventually(async () => (nativeOf(r, deeper)?.waiting ?? 0) >= 2, 5000);
    const n = nativeOf(r, deeper)!;
    expect(n.waitingUncachedTokens).toBeGreaterThan(8000);
    expect(n.running + 1).toBeLessThanOrEqual(n.maxRunningRequests);

    const before = await counters(r);
    const served = await send(r, base + EXTRA);
    const after = await counters(r);
    expect(after.cacheHit - before.cacheHit).toBe(1);
    if (fires) {
      expect(served).toBe(shallower);
      expect(after.guardCompared - before.guardCompared).toBeGreaterThanOrEqual(1);
      expect(after.guardOverrides - before.guardOverrides).toBe(1);
      expect(after.source('native_queue_tokens') - before.source('native_queue_tokens')).toBe(1);
    } else {
      expect(served).toBe(deeper);
      expect(after.guardOverrides - before.guardOverrides).toBe(0);
      expect(after.source('router_local') - before.source('router_local')).toBe(1);
    }
  });
});
