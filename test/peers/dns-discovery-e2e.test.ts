import { afterEach, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { steadyChats } from '../helpers/chat-load.js';
import { runCli } from '../helpers/cli.js';
import { Dnsmasq, freeUdpPort, srv } from '../helpers/dnsmasq.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { describeWithPeers } from '../helpers/peers.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * `--dns-discovery` against a real resolver (docs/http-edge.md §DNS discovery): dnsmasq
 * (Debian's dnsmasq-base, which .ci/run installs) on a loopback port, serving SRV and
 * A records for simulated engines on 127.0.0.x, restarted to change its records
 * (it re-reads only its hosts files on a signal). The router follows the records as
 * they are added, removed and changed, under steady load from the openai client.
 */
let dns = new Dnsmasq();
let fleets: SimFleet[] = [];
let router: Router | undefined;

afterEach(async () => {
  await router?.close();
  for (const f of fleets) await f.close();
  await dns.close();
  dns = new Dnsmasq();
  router = undefined;
  fleets = [];
});

const serveDns = (lines: string[]): Promise<void> => dns.serve(lines);
const stopDns = (): Promise<void> => dns.stop();

async function engine(host = '127.0.0.1', port = 0): Promise<{ url: string; port: number }> {
  const f = await startSimFleet({ workers: 1, speedup: 20, host, portBase: port });
  fleets.push(f);
  const url = f.urls[0]!;
  return { url, port: Number(new URL(url).port) };
}

const workerUrls = (r: Router): string[] => r.registry.workers.map((w) => w.url).sort();

describeWithPeers(['dnsmasq'], '--dns-discovery', () => {
  it('follows SRV records as they are added, removed and changed, under load, losing nothing', async () => {
    const [a, b, c] = [await engine(), await engine(), await engine()];
    const name = '_sglang._tcp.fleet.test';
    await serveDns([
      'host-record=w1.fleet.test,127.0.0.1',
      'host-record=w2.fleet.test,127.0.0.1',
      srv(name, 'w1.fleet.test', a.port),
      srv(name, 'w2.fleet.test', b.port),
    ]);
    const r = (router = await startTestRouter([], {
      dnsDiscovery: name,
      dnsResolver: `127.0.0.1:${dns.port}`,
      discoveryInterval: 0.2,
      policy: 'round_robin',
      adminToken: 'secret',
      shutdownDrainSecs: 10,
    }));
    expect(workerUrls(r)).toEqual([a.url, b.url].sort());
    // Discovery owns the fleet: the admin API says so.
    const refused = await rawRequest(`${r.url}/admin/workers`, {
      method: 'POST',
      body: JSON.stringify({ url: c.url }),
      headers: { authorization: 'Bearer secret', 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.text).error.code).toBe('discovery_managed');

    const chats = steadyChats(r.url);
    await eventually(async () => chats.done() >= 10);

    // Added: c joins. Removed: a leaves. Changed: b's record now points at c's port only.
    await serveDns([
      'host-record=w1.fleet.test,127.0.0.1',
      'host-record=w2.fleet.test,127.0.0.1',
      'host-record=w3.fleet.test,127.0.0.1',
      srv(name, 'w2.fleet.test', b.port),
      srv(name, 'w3.fleet.test', c.port),
    ]);
    await eventually(async () => JSON.stringify(workerUrls(r)) === JSON.stringify([b.url, c.url].sort()));
    await eventually(async () => r.state().workers.every((w) => w.healthy) && chats.done() >= 30);
    await serveDns(['host-record=w3.fleet.test,127.0.0.1', srv(name, 'w3.fleet.test', c.port)]);
    await eventually(async () => JSON.stringify(workerUrls(r)) === JSON.stringify([c.url]));
    const at = chats.done();
    await eventually(async () => chats.done() >= at + 10);
    expect(await chats.stop()).toEqual([]);
    const kinds = r.state().events.map((e) => `${e.kind} ${e.worker}`);
    expect(kinds).toEqual(expect.arrayContaining([`worker_added ${c.url}`, `worker_removed ${a.url}`, `worker_removed ${b.url}`]));

    // The resolver goes away: no answer says nothing about the fleet, which stays.
    await stopDns();
    await new Promise((res) => setTimeout(res, 600));
    expect(workerUrls(r)).toEqual([c.url]);
  });

  it('reads A records with --dns-discovery-port, and an empty answer empties the fleet', async () => {
    const port = await freeUdpPort(); // a free number; the engines take it on two loopback addresses over TCP
    const [x, y] = [await engine('127.0.0.2', port), await engine('127.0.0.3', port)];
    await serveDns(['host-record=engines.fleet.test,127.0.0.2', 'host-record=engines.fleet.test,127.0.0.3']);
    // check-config --probe asks DNS once, as serve would, and probes what it lists.
    const flags = [
      '--dns-discovery',
      'engines.fleet.test',
      '--dns-discovery-port',
      String(port),
      '--dns-resolver',
      `127.0.0.1:${dns.port}`,
    ];
    const probed = await runCli(['check-config', ...flags, '--probe']);
    expect(probed.code).toBe(0);
    expect(probed.stdout).toContain(`DNS discovery: engines.fleet.test lists 2 workers: ${x.url} ${y.url}`);
    const json = JSON.parse((await runCli(['check-config', ...flags, '--probe', '--json'])).stdout) as {
      discovery: { answered: boolean; urls: string[] };
      probe: { workers: Array<{ url: string; reachable: boolean }> };
    };
    expect(json.discovery).toMatchObject({ answered: true, urls: [x.url, y.url] });
    expect(json.probe.workers.map((w) => [w.url, w.reachable])).toEqual([
      [x.url, true],
      [y.url, true],
    ]);
    const r = (router = await startTestRouter([], {
      dnsDiscovery: 'engines.fleet.test',
      dnsDiscoveryPort: port,
      dnsResolver: `127.0.0.1:${dns.port}`,
      discoveryInterval: 0.2,
    }));
    expect(workerUrls(r)).toEqual([x.url, y.url]);
    await eventually(async () => (await rawRequest(`${r.url}/readyz`)).status === 200);
    await serveDns(['host-record=engines.fleet.test,127.0.0.3']);
    await eventually(async () => JSON.stringify(workerUrls(r)) === JSON.stringify([y.url]));
    await serveDns([]);
    await eventually(async () => workerUrls(r).length === 0);
    expect((await rawRequest(`${r.url}/readyz`)).status).toBe(503);
  });
});
