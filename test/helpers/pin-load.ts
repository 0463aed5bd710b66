import { expect } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { eventually, put } from './http.js';

/**
 * Pin simulated engines' reported waiting counts (PUT /sim/load; null lets the engine
 * report its own again) and wait until the router has sampled them: what the queue
 * gate then decides on is what the test set.
 */
export async function pinWaiting(r: Router, waiting: Record<string, number | null>): Promise<void> {
  for (const [url, n] of Object.entries(waiting)) expect((await put(`${url}/sim/load`, { num_waiting_reqs: n })).status).toBe(200);
  await eventually(async () =>
    r.state().workers.every((w) => !(w.url in waiting) || (waiting[w.url] === null ? w.waiting === 0 : w.waiting === waiting[w.url])),
  );
}
