import { afterEach, describe, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually, put } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * SGLang's LoadStat push feeding the real router from real simulated engines over ZMQ
 * on 127.0.0.1 (docs/engine-load.md §Load by push).
 */
let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = fleet = undefined;
});

/**
 * How long a worker may take to go over to push: its introspection, the subscription and
 * the first heartbeat, about a second alone, past 5 s once in a full CI run on 2 cores.
 */
const PUSH_TAKEOVER_MS = 15_000;

const worker = (r: Router, url: string) => r.state().workers.find((w) => w.url === url)!;

describe('load by push', () => {
  it('with polls a minute apart, the gate still follows a queue change: the load came by push', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 20, push: { kvEvents: true, kvFormat: 'array', loadPublish: true, topic: '' } });
    router = await startTestRouter(fleet.urls, { workerQueueLimit: 6, loadPollIntervalMs: 60_000 });
    const [a, b] = fleet.urls as [string, string];
    await eventually(async () => router!.state().workers.every((w) => w.load_source === 'push'), PUSH_TAKEOVER_MS);
    expect(worker(router, a).load_push).toMatchObject({ decode_errors_total: 0, last_error: null });
    expect(worker(router, a).load_push!.endpoints).toHaveLength(1);
    expect(worker(router, a).load_push!.endpoints[0]).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);

    await put(`${a}/sim/load`, { num_waiting_reqs: 9 });
    await eventually(async () => worker(router!, a).waiting === 9, 2000);
    expect(worker(router, a)).toMatchObject({ gated: true, fresh: true, load_source: 'push' });
    expect(worker(router, b)).toMatchObject({ gated: false, waiting: 0 });
    await put(`${a}/sim/load`, { num_waiting_reqs: null });
    await eventually(async () => worker(router!, a).waiting === 0, 2000);
    expect(worker(router, a).gated).toBe(false);
  });

  it('an idle engine heartbeats: its pushed sample stays fresh for longer than the freshness window', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 20, push: { kvEvents: true, kvFormat: 'array', loadPublish: true, topic: '' } });
    router = await startTestRouter(fleet.urls, { loadPollIntervalMs: 60_000, loadFreshnessMs: 1500 });
    await eventually(async () => router!.state().workers[0]!.load_source === 'push', PUSH_TAKEOVER_MS);
    const frames = router.state().workers[0]!.load_push!.frames_total;
    await new Promise((r) => setTimeout(r, 2500));
    const w = router.state().workers[0]!;
    expect(w).toMatchObject({ fresh: true, load_source: 'push' });
    expect(w.sample_age_ms).toBeLessThan(1500);
    expect(w.load_push!.frames_total).toBeGreaterThanOrEqual(frames + 2);
  });

  it('a channel that goes quiet hands the worker back to polling, and push takes over again when it resumes', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 20, push: { kvEvents: true, kvFormat: 'array', loadPublish: true, topic: '' } });
    router = await startTestRouter(fleet.urls, { loadPollIntervalMs: 300 });
    const url = fleet.urls[0]!;
    await eventually(async () => router!.state().workers[0]!.load_source === 'push', PUSH_TAKEOVER_MS);
    await put(`${url}/sim/push`, { load: 'paused' });
    await put(`${url}/sim/load`, { num_waiting_reqs: 3 });
    // Only a poll can bring the 3 in now.
    await eventually(async () => router!.state().workers[0]!.waiting === 3 && router!.state().workers[0]!.load_source === 'poll', 8000);
    expect(router.state().workers[0]!.fresh).toBe(true);
    await put(`${url}/sim/push`, { load: 'live' });
    await eventually(async () => router!.state().workers[0]!.load_source === 'push', PUSH_TAKEOVER_MS);
    // A paused load channel numbers nothing it does not send: no gap, nothing unreadable.
    expect(router.state().workers[0]!.load_push).toMatchObject({ decode_errors_total: 0, missed_total: 0 });
  });

  it('an engine that advertises no load channel is polled, and says so', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 20 });
    router = await startTestRouter(fleet.urls, { loadPollIntervalMs: 200 });
    await eventually(async () => router!.state().workers[0]!.fresh, 3000);
    expect(router.state().workers[0]).toMatchObject({ load_source: 'poll', load_push: null });
  });
});
