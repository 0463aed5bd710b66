import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/router/index.js';
import { EventWatcher } from '../../src/router/state/event-watcher.js';
import type { WorkerReading } from '../../src/router/state/worker-status.js';
import { startSimFleet } from '../../src/sim/index.js';
import { eventually, put } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/** A reading as the watcher reads it: waiting (null: no fresh sample), breaker, reachability, load source. */
function reading(url: string, waiting: number | null, o: { breaker?: string; unreachable?: boolean; push?: boolean } = {}): WorkerReading {
  return {
    worker: { url, breaker: { state: o.breaker ?? 'closed' } },
    fresh: waiting === null ? undefined : { waiting, running: 0 },
    unreachable: o.unreachable ?? false,
    loadSource: o.push ? 'push' : 'poll',
  } as unknown as WorkerReading;
}

describe('EventWatcher', () => {
  it('reports each change once, none on the first look', () => {
    const w = new EventWatcher(silentLogger);
    const steps: Array<[WorkerReading[], boolean]> = [
      [[reading('a', 7), reading('b', 0)], false], // baseline: a already gated, no event
      [[reading('a', 7), reading('b', 6)], true], // b gated; the fleet saturates
      [[reading('a', 2), reading('b', 6, { breaker: 'open' })], false], // a released; saturation ends; b's breaker opens
      [[reading('a', 2, { push: true }), reading('b', 6, { breaker: 'open', unreachable: true })], false], // a's load by push; b unreachable
      [[reading('a', 2, { push: true }), reading('b', 6, { breaker: 'open', unreachable: true })], false], // nothing new
    ];
    for (const [readings, allQueued] of steps) w.check(readings, 6, allQueued);
    expect(w.recent().map((e) => [e.kind, e.worker])).toEqual([
      ['saturation_begin', null],
      ['worker_gated', 'b'],
      ['saturation_end', null],
      ['worker_released', 'a'],
      ['breaker_open', 'b'],
      ['load_push', 'a'],
      ['worker_unreachable', 'b'],
    ]);
    expect(w.recent()[1]!.message).toBe('waiting 6 ≥ limit 6');
  });

  it('keeps the last 100', () => {
    const w = new EventWatcher(silentLogger);
    for (let i = 0; i < 150; i++) w.check([reading('a', i % 2 === 0 ? 9 : 0)], 6, false);
    expect(w.recent()).toHaveLength(100);
  });

  it('a real router reports a worker gated and released in /admin/state', async () => {
    const fleet = await startSimFleet({ workers: 2, speedup: 20 });
    const r = await startTestRouter(fleet.urls, { workerQueueLimit: 6, loadPollIntervalMs: 100 });
    try {
      await eventually(async () => r.state().workers.every((x) => x.fresh));
      await put(`${fleet.urls[0]}/sim/load`, { num_waiting_reqs: 8 });
      await eventually(async () => r.state().events.some((e) => e.kind === 'worker_gated' && e.worker === fleet.urls[0]), 3000);
      await put(`${fleet.urls[0]}/sim/load`, { num_waiting_reqs: null });
      await eventually(async () => r.state().events.some((e) => e.kind === 'worker_released'), 3000);
      const e = r.state().events.find((x) => x.kind === 'worker_gated')!;
      expect(e.message).toBe('waiting 8 ≥ limit 6');
      expect(Math.abs(e.at_ms - Date.now())).toBeLessThan(10_000);
    } finally {
      await r.close();
      await fleet.close();
    }
  });
});
