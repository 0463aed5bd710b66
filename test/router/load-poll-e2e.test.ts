/**
 * Load polling over real HTTP (docs/engine-load.md): a failed poll keeps a fresh
 * sample in force until it ages out, failures are counted by cause, unanswered polls
 * take a worker out of the pool until it answers again, every reply is read within
 * a byte cap, and a worker's DP ranks are replaced, never accumulated.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { AdminWorker, Router } from '../../src/router/index.js';
import { parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';
import { eventually, put, rawRequest } from '../helpers/http.js';
import { memoryLogger, startTestRouter, sendChat } from '../helpers/router.js';

const model = 'sim-llama-3.1-8b';
// ~1,500 estimated tokens: clears the default 1,024-token affinity minimum.
const prompt = (tag: string) => `${tag} `.repeat(3).concat('Shared operations runbook. '.repeat(230));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let fleet: SimFleet | undefined;
let router: Router | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  router = fleet = undefined;
});

const workerOf = (r: Router, url: string): AdminWorker => r.state().workers.find((w) => w.url === url)!;

const send = (r: Router, content: string): Promise<string> => sendChat(r, content, model);

async function metric(r: Router, name: string, match: (l: Record<string, string>) => boolean): Promise<number | undefined> {
  return sumSamples(parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text).get(name), match);
}

/** A stand-in engine on 127.0.0.1; `handle` answers everything. */
async function engine(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const MODELS = JSON.stringify({ object: 'list', data: [{ id: model, object: 'model', owned_by: 'sglang' }] });

describe('a failed poll never erases a fresh sample', () => {
  it('an owner whose load endpoint hangs stays gated until its sample ages out, then leaves the pool while unanswered', async () => {
    const log = memoryLogger();
    fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 50 });
    router = await startTestRouter(
      fleet.urls,
      { workerQueueLimit: 3, loadFreshnessMs: 1500, loadTimeoutMs: 200, loadPollIntervalMs: 50 },
      log,
    );
    const r = router;
    const owner = await send(r, prompt('hang'));
    expect((await put(`${owner}/sim/load`, { num_waiting_reqs: 5 })).status).toBe(200);
    await eventually(async () => workerOf(r, owner).gated);

    expect((await put(`${owner}/sim/config`, { load_fault: 'hang' })).status).toBe(200);
    const t0 = performance.now();
    await sleep(700);
    // Polls have timed out since, but the last sample is still in force: gated.
    const during = workerOf(r, owner);
    expect(during).toMatchObject({ fresh: true, gated: true, waiting: 5 });
    expect(during.load_poll_failures.timeout).toBeGreaterThanOrEqual(1);
    expect(during.last_poll_error).toMatchObject({ reason: 'timeout', message: expect.stringContaining('no answer within 200 ms') });
    expect(await send(r, prompt('hang'))).not.toBe(owner);

    // The sample ages out at --load-freshness-ms, not before.
    await eventually(async () => !workerOf(r, owner).fresh, 4000, 10);
    expect(performance.now() - t0).toBeGreaterThan(1400);
    expect(workerOf(r, owner)).toMatchObject({ fresh: false, gated: false, waiting: null });

    // Three unanswered polls in a row: out of the pool (healthy false), logged once.
    await eventually(async () => !workerOf(r, owner).healthy, 3000);
    expect(workerOf(r, owner)).toMatchObject({ healthy: false, breaker: 'closed', load_unreachable: true });
    expect(workerOf(r, owner).load_poll_unanswered).toBeGreaterThanOrEqual(3);
    expect(await metric(r, 'sgl_router_worker_health', (l) => l.worker_url === owner)).toBe(0);
    expect(
      await metric(r, 'sgl_router_load_poll_failures_total', (l) => l.worker === owner && l.reason === 'timeout'),
    ).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < 6; i++) expect(await send(r, prompt(`elsewhere ${i}`))).not.toBe(owner);
    await sleep(500);
    const outLogs = () => log.lines.filter((l) => l.msg.includes('does not answer its load polls') && l.fields?.worker === owner);
    expect(outLogs()).toHaveLength(1);

    // It answers again: back in the pool at the first answer, logged once.
    await put(`${owner}/sim/load`, { num_waiting_reqs: null });
    await put(`${owner}/sim/config`, { load_fault: null });
    await eventually(async () => workerOf(r, owner).healthy && workerOf(r, owner).fresh && workerOf(r, owner).waiting === 0, 3000);
    expect(workerOf(r, owner)).toMatchObject({ load_unreachable: false, load_poll_unanswered: 0, gated: false });
    expect(log.lines.filter((l) => l.msg.includes('answers its load polls again') && l.fields?.worker === owner)).toHaveLength(1);
    expect(outLogs()).toHaveLength(1);
  });

  it('refused connections take a worker out; a worker that answers without a usable load stays in, counted as unreadable', async () => {
    fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 50 });
    const [silent, healthy] = fleet.urls as [string, string];
    const doomed = await engine(
      (req, res) =>
        void res.writeHead(req.url === '/v1/models' ? 200 : 404).end(req.url === '/v1/models' ? MODELS : '{"detail":"Not Found"}'),
    );
    router = await startTestRouter([silent, healthy, doomed], { loadTimeoutMs: 300, loadPollIntervalMs: 50 });
    const r = router;
    await put(`${silent}/sim/config`, { load_reporting: false });
    const s = servers.pop()!;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));

    await eventually(async () => !workerOf(r, doomed).healthy, 4000);
    expect(workerOf(r, doomed).load_poll_failures.connect).toBeGreaterThanOrEqual(3);
    expect(workerOf(r, doomed).last_poll_error?.reason).toBe('connect');
    // load_reporting false: /v1/loads and /get_load answer 404, /metrics has no queue gauges.
    await eventually(async () => workerOf(r, silent).load_poll_failures.unreadable >= 3);
    expect(workerOf(r, silent).load_poll_failures).toMatchObject({ timeout: 0, connect: 0, too_large: 0 });
    expect(workerOf(r, silent)).toMatchObject({ healthy: true, load_unreachable: false, load_poll_unanswered: 0 });
    expect(workerOf(r, healthy)).toMatchObject({ healthy: true, load_poll_failures_total: 0, last_poll_error: null });
    // Nothing is sent to the refused worker, so no client sees its failure.
    for (let i = 0; i < 8; i++) expect(await send(r, `refused ${i}`)).not.toBe(doomed);
    expect(workerOf(r, doomed).requests_total).toBe(0);
  });
});

describe('every byte read from an engine is bounded', () => {
  it('a chunked, endless load reply is cut at the cap: RSS stays flat and the poll counts as too_large', async () => {
    const GiB = 1024 ** 3;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let maxSentPerReply = 0;
    const url = await engine((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/v1/models') return void res.writeHead(200, { 'content-type': 'application/json' }).end(MODELS);
      // Everything else, /server_info included, is an endless chunked reply (1 GiB).
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      let closed = false;
      res.on('close', () => {
        closed = true;
        maxSentPerReply = Math.max(maxSentPerReply, sent);
      });
      res.write('{"loads": [');
      const pump = (): void => {
        while (!closed && sent < GiB) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!closed) res.end(']}');
      };
      pump();
    });
    const fleetless = await startTestRouter([url], { loadTimeoutMs: 5000, loadPollIntervalMs: 100 });
    router = fleetless;
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    await eventually(
      async () => {
        peak = Math.max(peak, process.memoryUsage().rss);
        return workerOf(fleetless, url).load_poll_failures.too_large >= 20;
      },
      20_000,
      25,
    );
    const w = workerOf(fleetless, url);
    const growthMiB = (peak - rss0) / 1024 ** 2;
    console.log(
      `endless chunked load reply: ${w.load_poll_failures.too_large} polls cut, RSS growth ${growthMiB.toFixed(1)} MiB, most sent in one reply ${(maxSentPerReply / 1024 ** 2).toFixed(1)} MiB`,
    );
    expect(growthMiB).toBeLessThan(64);
    expect(w).toMatchObject({ healthy: true, fresh: false, last_poll_error: { reason: 'too_large' } });
    expect(w.last_poll_error?.message).toContain('4 MiB');
    expect(maxSentPerReply).toBeLessThan(64 * 1024 ** 2);
    expect(
      await metric(fleetless, 'sgl_router_load_poll_failures_total', (l) => l.worker === url && l.reason === 'too_large'),
    ).toBeGreaterThanOrEqual(20);
  });
});

describe('DP ranks are replaced per sample and bounded', () => {
  it('an engine reporting ever-changing ranks does not grow the table; an absurd rank count is unreadable', async () => {
    let poll = 0;
    let absurd = false;
    const url = await engine((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/v1/models') return void res.writeHead(200, { 'content-type': 'application/json' }).end(MODELS);
      if (path !== '/v1/loads') return void res.writeHead(404).end();
      poll++;
      const ranks = absurd ? Array.from({ length: 5000 }, (_, i) => i) : [poll * 2, poll * 2 + 1];
      const loads = ranks.map((dp_rank) => ({ dp_rank, num_running_reqs: 1, num_waiting_reqs: 2 }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ loads }));
    });
    router = await startTestRouter([url], { loadPollIntervalMs: 10 });
    const r = router;
    const w = r.registry.workers[0]!;
    await eventually(async () => poll >= 100, 10_000);
    expect(r.table.rankCount(w)).toBe(2);
    expect(workerOf(r, url)).toMatchObject({ waiting: 4, running: 2, fresh: true });
    absurd = true;
    await eventually(async () => workerOf(r, url).load_poll_failures.unreadable > 0, 5000);
    expect(workerOf(r, url).last_poll_error?.message).toContain('more than 1024 ranks');
    expect(r.table.rankCount(w)).toBe(2);
  });
});
