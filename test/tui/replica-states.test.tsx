import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetFeed } from '../../src/fleet/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { ConsoleApp } from '../../src/tui/index.js';
import { eventually } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * The console over real routers, each replica up, draining or down with the age of its
 * last answer (docs/metrics-and-admin.md §Replica states).
 */
let fleet: SimFleet | undefined;
const routers: Router[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const r of routers.splice(0)) await r.close().catch(() => undefined);
  await fleet?.close();
  fleet = undefined;
});

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const host = (url: string): string => url.replace(/^http:\/\//, '');
const escape = (s: string): string => s.replace(/[.:]/g, '\\$&');

async function mountConsole(urls: string[]): Promise<() => string> {
  const feed = await FleetFeed.connect({ urls, source: 'admin', intervalMs: 200 });
  cleanups.push(() => feed.close());
  // Wide enough that the header's router list is not cut.
  const r = render(
    <ConsoleApp
      feed={feed}
      onQuit={() => undefined}
      color={false}
      title="routerctl top"
      target={urls.join(', ')}
      intervalMs={200}
      blockSize={16}
      size={{ columns: 260, rows: 40 }}
    />,
  );
  cleanups.push(() => r.unmount());
  return () => r.lastFrame() ?? '';
}

describe('the console names each replica with its state and the age of its last answer', () => {
  it('one up, one down from the start, one draining; the down one turns up when a router listens there', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 20 });
    const up = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
    const draining = await startTestRouter(fleet.urls, { workerQueueLimit: 6, shutdownDrainSecs: 30 });
    routers.push(up, draining);
    let endPause!: () => void;
    const stopping = draining.shutdown({ skipPause: new Promise<void>((resolve) => (endPause = resolve)) });
    cleanups.push(async () => {
      endPause();
      await stopping;
    });
    const port = await closedPort();
    const late = `http://127.0.0.1:${port}`;

    const frame = await mountConsole([up.url, late, draining.url]);
    await eventually(async () => frame().includes('DRAINING'), 5000);
    const header = frame().split('\n').slice(0, 2).join('\n');
    expect(header).toMatch(new RegExp(`${escape(host(up.url))} up \\d+ms ago`));
    expect(header).toMatch(new RegExp(`${escape(host(late))} down \\(never answered\\)`));
    expect(header).toMatch(new RegExp(`${escape(host(draining.url))} draining \\d+ms ago`));
    expect(header).toContain(`DOWN ${host(late)}: cannot reach the router at ${late}: connection refused`);
    expect(header).toContain(`DRAINING ${host(draining.url)}: takes no new requests`);
    expect(header).toContain('replicas 2/3 live');

    const b = await startTestRouter(fleet.urls, { workerQueueLimit: 6, port });
    routers.push(b);
    await eventually(async () => new RegExp(`${escape(host(late))} up \\d+ms ago`).test(frame()), 10_000);
    expect(frame()).not.toContain(`DOWN ${host(late)}`);
    expect(frame()).toContain('replicas 3/3 live');
    expect(frame()).toMatch(/router replica answers: now in the fleet figures/);
  }, 30_000);

  it('a replica that stops answering: down, with the age of its last answer growing', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 20 });
    const a = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
    const b = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
    routers.push(a, b);
    const frame = await mountConsole([a.url, b.url]);
    await eventually(async () => new RegExp(`${escape(host(b.url))} up \\d+ms ago`).test(frame()), 5000);
    await b.close();
    const downAge = new RegExp(`${escape(host(b.url))} down (\\d+(?:\\.\\d)?)(ms|s) ago`);
    await eventually(async () => downAge.test(frame()), 10_000);
    expect(frame()).toMatch(new RegExp(`DOWN for \\S+ ${escape(host(b.url))}: `));
    expect(frame()).toMatch(new RegExp(`${escape(host(a.url))} up \\d+ms ago`));
    // The clock ticks each second: the age of b's last answer reaches a second and more.
    await eventually(async () => /^\d/.test(frame().match(downAge)?.[1] ?? '') && frame().match(downAge)?.[2] === 's', 5000);
  }, 30_000);
});
