import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/router/index.js';
import { queueGate } from '../../src/router/policies/queue-gate.js';
import { EventWatcher } from '../../src/router/status/event-watcher.js';
import type { WorkerReading } from '../../src/router/status/worker-status.js';
import { startSimFleet } from '../../src/sim/index.js';
import { eventually, put } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * The workers the readings are of, by URL: one object each while it stays, in a slot of
 * its own, as the registry holds them; `rejoin` makes a new one, as a worker removed and
 * added again is.
 */
const workers = new Map<string, { url: string; slot: number; breaker: { state: string } }>();
let slots = 0;
function workerAt(url: string): { url: string; slot: number; breaker: { state: string } } {
  let w = workers.get(url);
  if (w === undefined) workers.set(url, (w = { url, slot: slots++, breaker: { state: 'closed' } }));
  return w;
}
const rejoin = (url: string): void => void workers.delete(url);

/** A reading as the watcher reads it: waiting (null: no fresh sample), breaker, reachability, load source. */
function reading(url: string, waiting: number | null, o: { breaker?: string; unreachable?: boolean; push?: boolean } = {}): WorkerReading {
  const worker = workerAt(url);
  worker.breaker.state = o.breaker ?? 'closed';
  return {
    worker,
    fresh: waiting === null ? undefined : { waiting, running: 0 },
    unreachable: o.unreachable ?? false,
    loadSource: o.push ? 'push' : 'poll',
  } as unknown as WorkerReading;
}

/** The gate the router would build from --worker-queue-limit 6. */
const LIMIT_6 = queueGate({ workerQueueLimit: 6, saturationQueueFloor: null });

describe('EventWatcher', () => {
  it('reports each change once, none on the first look', () => {
    const w = new EventWatcher(silentLogger, LIMIT_6);
    const steps: Array<[() => WorkerReading[], boolean]> = [
      [() => [reading('a', 7), reading('b', 0)], false], // baseline: a already gated, no event
      [() => [reading('a', 7), reading('b', 6)], true], // b gated; the fleet saturates
      [() => [reading('a', 2), reading('b', 6, { breaker: 'open' })], false], // a released; saturation ends; b's breaker opens
      [() => [reading('a', 2, { push: true }), reading('b', 6, { breaker: 'open', unreachable: true })], false], // a's load by push; b unreachable
      [() => [reading('a', 2, { push: true }), reading('b', 6, { breaker: 'open', unreachable: true })], false], // nothing new
    ];
    // Each look's readings are made as it comes: a breaker's state is its worker's, read at the look.
    for (const [readings, allQueued] of steps) w.check(readings(), allQueued);
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

  it('forgets a worker that left: back, it starts from a new baseline (no release event for a mark it no longer has)', () => {
    const w = new EventWatcher(silentLogger, LIMIT_6);
    w.check([reading('a', 0), reading('b', 9)], false); // baseline: b gated
    w.check([reading('a', 0)], false); // b left
    rejoin('b');
    w.check([reading('a', 0), reading('b', 0)], false); // b back, below the limit: a new worker, no event
    w.check([reading('a', 0), reading('b', 8)], false); // now a change from its new baseline
    expect(w.recent().map((e) => [e.kind, e.worker])).toEqual([['worker_gated', 'b']]);
  });

  it('a worker that leaves as another joins is forgotten all the same: seen again, it starts from a new baseline', () => {
    const w = new EventWatcher(silentLogger, LIMIT_6);
    w.check([reading('a', 0), reading('b', 9)], false); // baseline: b gated
    w.check([reading('a', 0), reading('c', 9)], false); // b left as c joined: as many workers as marks before
    w.check([reading('a', 0), reading('c', 9), reading('b', 0)], false); // b seen again, below the limit: no release
    w.check([reading('a', 0), reading('c', 2), reading('b', 0)], false);
    expect(w.recent().map((e) => [e.kind, e.worker])).toEqual([['worker_released', 'c']]);
  });

  it("a look reuses one object for every worker, as the router's fleet iterator hands them", () => {
    const w = new EventWatcher(silentLogger, LIMIT_6);
    const fleet = (waiting: number[]): Iterable<WorkerReading> => ({
      *[Symbol.iterator]() {
        const scratch = reading('', 0) as { -readonly [K in keyof WorkerReading]: WorkerReading[K] };
        for (const [i, v] of waiting.entries()) {
          Object.assign(scratch, reading(`w${i}`, v));
          yield scratch;
        }
      },
    });
    w.check(fleet([0, 0, 9]), false);
    w.check(fleet([7, 0, 9]), false);
    expect(w.recent().map((e) => [e.kind, e.worker])).toEqual([['worker_gated', 'w0']]);
  });

  it('diversions in bursts: one event when 10 come within 5 s, one when a whole 5 s passes without any; a trickle says nothing', () => {
    const w = new EventWatcher(silentLogger, LIMIT_6);
    const look = (t: number, total: number): void => w.check([reading('a', 0)], false, total, t);
    let total = 0;
    look(0, total); // baseline
    // A trickle: one every second for 8 s (5 per window at most).
    for (let t = 1000; t <= 8000; t += 1000) look(t, ++total);
    expect(w.recent()).toEqual([]);
    // A burst: 12 within 1.5 s.
    for (let t = 8500; t <= 10_000; t += 500) look(t, (total += 3));
    expect(w.recent().map((e) => e.kind)).toEqual(['diversion_burst']);
    expect(w.recent()[0]!.message).toMatch(/^1\d requests diverted from their prefix owner in \d+\.\d s/);
    // Quiet for 4.5 s: not over yet; a whole 5 s: over, with the burst's count.
    look(14_500, total);
    expect(w.recent()).toHaveLength(1);
    look(15_500, total);
    expect(w.recent().map((e) => e.kind)).toEqual(['diversion_burst', 'diversion_burst_end']);
    expect(w.recent()[1]!.message).toMatch(/^diversions stopped: \d+ in \d+ s$/);
  });

  it('keeps the last 100', () => {
    const w = new EventWatcher(silentLogger, LIMIT_6);
    for (let i = 0; i < 150; i++) w.check([reading('a', i % 2 === 0 ? 9 : 0)], false);
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
      // The first event says what the router routes by.
      expect(r.state().events[0]).toMatchObject({ kind: 'router_started', worker: null });
      expect(r.state().events[0]!.message).toMatch(
        /^routing 2 workers at http:\/\/127\.0\.0\.1:\d+: policy cache_aware, worker-queue-limit 6, prefix from requests$/,
      );
      expect(e.message).toBe('waiting 8 ≥ limit 6');
      expect(Math.abs(e.at_ms - Date.now())).toBeLessThan(10_000);
    } finally {
      await r.close();
      await fleet.close();
    }
  });
});
