import { afterEach, describe, expect, it } from 'vitest';
import { FleetFeed } from '../../src/fleet/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/** The console's own events: a router replica going down and coming back (docs/metrics-and-admin.md §Events). */
let fleet: SimFleet | undefined;
const routers: Router[] = [];
let feed: FleetFeed | undefined;
afterEach(async () => {
  await feed?.close();
  feed = undefined;
  for (const r of routers.splice(0)) await r.close().catch(() => undefined);
  await fleet?.close();
  fleet = undefined;
});

describe('replica_down and replica_up', () => {
  it('two routers on one fleet; one stops: the view says so once, and once more when it is back', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 20 });
    const a = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
    const b = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
    routers.push(a, b);
    const port = Number(new URL(b.url).port);
    feed = await FleetFeed.connect({ urls: [a.url, b.url], source: 'admin', intervalMs: 200 });
    const kinds = (): string[] =>
      (feed!.get()?.events ?? []).filter((e) => e.kind.startsWith('replica_')).map((e) => `${e.kind} ${e.replica}`);
    expect(kinds()).toEqual([]);
    await b.close();
    await eventually(async () => kinds().length === 1, 8000);
    expect(kinds()).toEqual([`replica_down ${b.url}`]);
    // The same address answers again.
    const b2 = await startTestRouter(fleet.urls, { workerQueueLimit: 6, port });
    routers.push(b2);
    await eventually(async () => kinds().length === 2, 8000);
    expect(kinds()).toEqual([`replica_down ${b.url}`, `replica_up ${b.url}`]);
    expect(feed.get()!.events.find((e) => e.kind === 'replica_down')!.message).toMatch(/^router replica stopped answering/);
  }, 30_000);

  it('the stream carries the decision records: the merged view has the recent ones for the drill-down', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 20 });
    const a = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
    routers.push(a);
    feed = await FleetFeed.connect({ urls: [a.url], source: 'admin', intervalMs: 200 });
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${a.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': `feed-${i}` },
        body: JSON.stringify({ messages: [{ role: 'user', content: `hello ${i}` }], max_tokens: 2 }),
      });
      await res.text();
    }
    await eventually(async () => (feed!.get()?.recentDecisions.length ?? 0) >= 3, 8000);
    expect(feed.get()!.recentDecisions.map((d) => d.request_id)).toEqual(['feed-0', 'feed-1', 'feed-2']);
  }, 30_000);
});
