import { afterEach, describe, expect, it } from 'vitest';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import { parsePrometheusText, sumSamples, histogramSeries } from '../../src/prometheus/index.js';
import { QUEUE_GATE_INERT_MESSAGE } from '../../src/router/policies/cache-aware/index.js';
import { eventually, put, rawRequest } from '../helpers/http.js';
import { memoryLogger, startTestRouter, sendChat } from '../helpers/router.js';

/**
 * The queue gate end to end: real sim engines, the real router, load pinned on the
 * engines with PUT /sim/load and read back by the router's own sampler, every
 * assertion on /metrics (and /admin/state) as an operator would read them.
 */
const model = 'sim-llama-3.1-8b';
const LIMIT = 4;
// ~1,500 estimated tokens: clears the default 1,024-token affinity minimum.
const prompt = (tag: string) => `${tag} `.repeat(3).concat('Shared operations runbook. '.repeat(230));

let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = fleet = undefined;
});

async function setup(workers: number, overrides: Partial<RouterConfig> = {}, log = memoryLogger()) {
  fleet = await startSimFleet({ workers, portBase: 0, speedup: 50 });
  router = await startTestRouter(fleet.urls, { workerQueueLimit: LIMIT, ...overrides }, log);
  return { fleet, router, log };
}

async function metrics(r: Router) {
  return parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text);
}

async function snapshot(r: Router) {
  const m = await metrics(r);
  const dec = (d: string) => sumSamples(m.get('sgl_router_cache_aware_decisions_total'), (l) => l.decision === d) ?? 0;
  const hist = histogramSeries(m.get('sgl_router_diverted_overlap_blocks')!)[0]!;
  return {
    cache_hit: dec('cache_hit'),
    cache_miss: dec('cache_miss'),
    cache_worker_queued: dec('cache_worker_queued'),
    all_queued: dec('all_queued'),
    histogramCount: hist.count,
    histogramSum: hist.sum,
    partial: sumSamples(m.get('sgl_router_partial_diversions_total')) ?? 0,
    rejectedBy: (worker: string) => sumSamples(m.get('sgl_router_queue_gate_rejected_total'), (l) => l.worker === worker) ?? 0,
    inert: sumSamples(m.get('sgl_router_queue_gate_inert')),
    pins: sumSamples(m.get('sgl_router_policy_decisions_total'), (l) => l.reason === 'saturation_pin') ?? 0,
  };
}

const send = (r: Router, content: string): Promise<string> => sendChat(r, content, model);

/** Pin engines' reported waiting counts and wait until the router has sampled them. */
async function pin(r: Router, waiting: Record<string, number | null>): Promise<void> {
  for (const [url, n] of Object.entries(waiting)) expect((await put(`${url}/sim/load`, { num_waiting_reqs: n })).status).toBe(200);
  await eventually(async () =>
    r.state().workers.every((w) => !(w.url in waiting) || (waiting[w.url] === null ? w.waiting === 0 : w.waiting === waiting[w.url])),
  );
}

/** Make two owners of the same prefix: the second by diverting off the first. */
async function twoOwners(r: Router, f: SimFleet, content: string): Promise<[string, string]> {
  const first = await send(r, content);
  await pin(r, { [first]: LIMIT });
  const second = await send(r, content);
  expect(second).not.toBe(first);
  await pin(r, { [first]: null });
  void f;
  return [first, second];
}

describe('worker queue gate over real HTTP', () => {
  it('1. owner at the limit, an idle non-owner: the request is diverted, and the cost is measured', async () => {
    const { router: r } = await setup(3);
    const owner = await send(r, prompt('one'));
    await pin(r, { [owner]: LIMIT });
    const before = await snapshot(r);
    const served = await send(r, prompt('one'));
    const after = await snapshot(r);
    expect(served).not.toBe(owner);
    expect(after.cache_worker_queued - before.cache_worker_queued).toBe(1);
    expect(after.histogramCount - before.histogramCount).toBe(1);
    // The owner's depth: every full 64-character block of the rendered prompt.
    expect(after.histogramSum - before.histogramSum).toBeGreaterThan(80);
    expect(after.rejectedBy(owner) - before.rejectedBy(owner)).toBe(1);
    expect(r.state().workers.find((w) => w.url === owner)).toMatchObject({ gated: true, gate_rejections_total: 1 });
  });

  it('2. two owners, the deeper one gated: the shallower owner wins, a partial diversion', async () => {
    const { router: r, fleet: f } = await setup(2);
    const base = prompt('two');
    await twoOwners(r, f, base);
    const deeper = await send(r, `${base}${'More context for the deeper owner. '.repeat(40)}`);
    const shallower = f.urls.find((u) => u !== deeper)!;
    await pin(r, { [deeper]: LIMIT + 2 });
    const before = await snapshot(r);
    const served = await send(r, `${base}${'More context for the deeper owner. '.repeat(40)}`);
    const after = await snapshot(r);
    expect(served).toBe(shallower);
    expect(after.cache_hit - before.cache_hit).toBe(1);
    expect(after.partial - before.partial).toBe(1);
    expect(after.histogramCount).toBe(before.histogramCount);
    expect(after.rejectedBy(deeper) - before.rejectedBy(deeper)).toBe(1);
  });

  it('3. every engine over the limit: affinity kept, all_queued, and the alert while it lasts', async () => {
    const { router: r, fleet: f } = await setup(3);
    const owner = await send(r, prompt('three'));
    await pin(r, Object.fromEntries(f.urls.map((u) => [u, LIMIT + 1])));
    expect(r.state().alerts.all_queued).toBe(true);
    const before = await snapshot(r);
    expect(await send(r, prompt('three'))).toBe(owner);
    const after = await snapshot(r);
    expect(after.all_queued - before.all_queued).toBe(1);
    expect(after.cache_worker_queued).toBe(before.cache_worker_queued);
    await pin(r, { [f.urls[0]!]: null });
    expect(r.state().alerts.all_queued).toBe(false);
  });

  it('4. no engine reports load: the gate fails open, says it is inert, and warns once per 64 blind requests', async () => {
    const log = memoryLogger();
    const { router: r, fleet: f } = await setup(3, {}, log);
    const owner = await send(r, prompt('four'));
    for (const u of f.urls) await put(`${u}/sim/config`, { load_reporting: false });
    await eventually(async () => r.state().workers.every((w) => !w.fresh));
    expect((await snapshot(r)).inert).toBe(1);
    expect(r.state().alerts.gate_inert).toBe(true);
    for (let i = 0; i < 64; i++) expect(await send(r, prompt('four'))).toBe(owner);
    expect(log.lines.filter((l) => l.msg === QUEUE_GATE_INERT_MESSAGE)).toHaveLength(1);
    expect(log.lines.find((l) => l.msg === QUEUE_GATE_INERT_MESSAGE)?.level).toBe('warn');
    await send(r, prompt('four'));
    expect(log.lines.filter((l) => l.msg === QUEUE_GATE_INERT_MESSAGE)).toHaveLength(2);
  });

  it('5. limit unset: a queueing owner keeps affinity, as on the plain cache-aware path, and gate metrics stay silent', async () => {
    const { router: r, fleet: f } = await setup(3, { workerQueueLimit: null });
    const owner = await send(r, prompt('five'));
    await pin(r, { [owner]: 50 });
    const before = await snapshot(r);
    expect(await send(r, prompt('five'))).toBe(owner);
    const after = await snapshot(r);
    expect(after.cache_hit - before.cache_hit).toBe(1);
    expect(after.cache_worker_queued + after.all_queued + after.histogramCount + after.partial).toBe(0);
    expect(f.urls.map((u) => after.rejectedBy(u))).toEqual([0, 0, 0]);
    expect(after.inert).toBe(0);
    expect(r.state().workers.some((w) => w.gated)).toBe(false);
  });

  it('6. saturation floor: pinned to an owner while nobody is below the floor; diverted once someone is', async () => {
    const { router: r, fleet: f } = await setup(3, { saturationQueueFloor: 2 });
    const [a, b] = await twoOwners(r, f, prompt('six'));
    const other = f.urls.find((u) => u !== a && u !== b)!;
    await pin(r, { [a]: 9, [b]: 5, [other]: 3 });
    let before = await snapshot(r);
    const pinned = await send(r, prompt('six'));
    let after = await snapshot(r);
    expect([a, b]).toContain(pinned);
    expect(after.all_queued - before.all_queued).toBe(1);
    expect(after.pins - before.pins).toBe(1);
    await pin(r, { [other]: 1 });
    before = after;
    expect(await send(r, prompt('six'))).toBe(other);
    after = await snapshot(r);
    expect(after.cache_worker_queued - before.cache_worker_queued).toBe(1);
  });
});
