/**
 * A large fleet's polls are spread, from the first round on (docs/engine-load.md
 * §Polling a large fleet): opening a thousand connections at once outlasts a poll
 * timeout, and every one would count as a failed poll. 400 real HTTP servers stand
 * in for the workers and answer every poll 10 ms late, so a burst shows as 400 polls
 * in flight at once.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LoadSampler, LoadTable } from '../../src/router/state/load-monitor/index.js';
import type { Worker } from '../../src/router/upstream/worker.js';

const LOADS = JSON.stringify({ loads: [{ dp_rank: 0, num_running_reqs: 1, num_waiting_reqs: 2, num_used_tokens: 0 }] });
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the sampler in front of 400 workers', () => {
  it('spreads the first round (never the whole fleet in flight) and samples every worker within the freshness window', async () => {
    let inFlight = 0;
    let most = 0;
    const polled = new Set<number>();
    const urls: string[] = [];
    for (let slot = 0; slot < 400; slot++) {
      const server = createServer((_req, res) => {
        inFlight++;
        most = Math.max(most, inFlight);
        polled.add(slot);
        setTimeout(() => {
          inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' }).end(LOADS);
        }, 10);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
      urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    }

    const table = new LoadTable(5000);
    const sampler = new LoadSampler(table, { intervalMs: 250, freshnessMs: 5000, timeoutMs: 2000, now: () => performance.now() });
    cleanups.push(() => sampler.stop());
    const workers = urls.map((url, slot) => ({ id: url, url, slot, inflight: 0 }) as unknown as Worker);
    for (const w of workers) {
      table.register(w);
      table.setInPool(w, true);
      sampler.add(w);
    }
    sampler.start();
    await vi.waitFor(() => expect(workers.filter((w) => table.view(1).basic(w)?.waiting === 2)).toHaveLength(400), {
      timeout: 4000,
      interval: 50,
    });
    expect(polled.size).toBe(400);
    // The first round goes at twice the poll budget, 6 or 7 polls a 2 ms tick: even if a
    // busy machine let many ticks' polls overlap, that is not the fleet's 400.
    expect(most).toBeLessThanOrEqual(250);
    expect(workers.filter((w) => sampler.stats(w).failuresTotal > 0)).toHaveLength(0);
  });
});
