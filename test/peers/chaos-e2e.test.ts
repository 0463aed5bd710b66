import { request } from 'undici';
import { afterEach, expect, it } from 'vitest';
import type { AdminState } from '../../src/contract/index.js';
import type { Router } from '../../src/router/index.js';
import { Rng, startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { startCli } from '../helpers/cli.js';
import type { RunningCli } from '../helpers/cli.js';
import { Dnsmasq, srv } from '../helpers/dnsmasq.js';
import { eventually, put, rawRequest } from '../helpers/http.js';
import { describeWithPeers } from '../helpers/peers.js';
import { memoryLogger, startTestRouter } from '../helpers/router.js';

/**
 * Chaos, bounded in time: three router replicas on `--prefix-source events`, all
 * following one DNS name (dnsmasq on a loopback port), under steady token-id load
 * through all three, while engines are added, removed and restarted (their event
 * sequences start again at 0) and one replica, a real `routerctl serve` process, is
 * SIGKILLed and started again. What a client and an operator see is checked: every
 * request a replica that stayed up accepted got an answer (a success, or an error
 * with its code), and once events settle the three replicas' index digests agree,
 * the restarted one's included.
 */
const NAME = '_sglang._tcp.fleet.test';
const pushing = { kvEvents: true, kvFormat: 'map' as const, loadPublish: true, topic: 'kv' };

let dns = new Dnsmasq();
let engines: SimFleet[] = [];
let routers: Router[] = [];
let processes: RunningCli[] = [];

afterEach(async () => {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  for (const r of routers) await r.close();
  for (const e of engines) await e.close();
  await dns.close();
  dns = new Dnsmasq();
  engines = [];
  routers = [];
  processes = [];
});

async function engine(): Promise<{ url: string; port: number }> {
  const f = await startSimFleet({ workers: 1, speedup: 50, push: pushing, asSglang: true });
  engines.push(f);
  return { url: f.urls[0]!, port: Number(new URL(f.urls[0]!).port) };
}

const records = (ports: readonly number[]): string[] =>
  ports.flatMap((p, i) => [`host-record=e${i}.fleet.test,127.0.0.1`, srv(NAME, `e${i}.fleet.test`, p)]);

const discovery = (): string[] => ['--dns-discovery', NAME, '--dns-resolver', dns.resolver, '--discovery-interval', '0.2'];

async function processReplica(): Promise<{ cli: RunningCli; url: string }> {
  const cli = startCli(['serve', '--no-tui', '--port', '0', '--prefix-source', 'events', '--shutdown-drain-secs', '10', ...discovery()]);
  processes.push(cli);
  const [url] = await cli.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m, 15_000);
  return { cli, url: url! };
}

const stateOf = async (url: string): Promise<AdminState> => JSON.parse((await rawRequest(`${url}/admin/state`)).text) as AdminState;
const workersOf = async (url: string): Promise<string[]> => (await stateOf(url)).workers.map((w) => w.url).sort();

describeWithPeers(['dnsmasq'], 'chaos: membership, engine restarts and a killed replica under load', () => {
  it('answers every request a live replica accepted, and the three digests agree once events settle', async () => {
    const e = [await engine(), await engine(), await engine(), await engine()];
    await dns.serve(records([e[0]!.port, e[1]!.port, e[2]!.port]));
    // A leaving engine's in-flight requests get up to 10 s to finish, as --shutdown-drain-secs gives them.
    const opts = {
      prefixSource: 'events' as const,
      dnsDiscovery: NAME,
      dnsResolver: dns.resolver,
      discoveryInterval: 0.2,
      shutdownDrainSecs: 10,
    };
    const log = memoryLogger();
    const r1 = await startTestRouter([], opts, log);
    const r2 = await startTestRouter([], opts, log);
    routers.push(r1, r2);
    let third = await processReplica();
    const all = (): string[] => [r1.url, r2.url, third.url];

    // Steady load: token-id prompts over a few shared prefixes, through every replica.
    const unanswered: string[] = [];
    const answered = { ok: 0, errors: 0 };
    const errorCodes: string[] = [];
    let stop = false;
    const rng = new Rng(30);
    const prefixes = Array.from({ length: 6 }, () => Array.from({ length: 256 }, () => 1 + rng.int(150_000)));
    const load = async (target: () => string, mustAnswer: boolean): Promise<void> => {
      while (!stop) {
        const ids = [...prefixes[rng.int(prefixes.length)]!, ...Array.from({ length: 32 + rng.int(64) }, () => 1 + rng.int(150_000))];
        try {
          // undici rejects when the connection dies before an answer (a killed replica), and gives up after 10 s.
          const res = await request(`${target()}/generate`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ input_ids: ids, sampling_params: { max_new_tokens: 2 } }),
            headersTimeout: 10_000,
            bodyTimeout: 10_000,
          });
          await res.body.text();
          if (res.statusCode === 200) answered.ok++;
          else if (typeof res.headers['x-router-error-code'] === 'string') {
            answered.errors++;
            errorCodes.push(`${res.statusCode} ${res.headers['x-router-error-code']}`);
          } else unanswered.push(`status ${res.statusCode} without an error code`);
        } catch (err) {
          if (mustAnswer) unanswered.push((err as Error).message);
          else await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const loops = [load(() => r1.url, true), load(() => r1.url, true), load(() => r2.url, true), load(() => third.url, false)];
    await eventually(async () => answered.ok >= 20);

    // An engine joins.
    await dns.serve(records([e[0]!.port, e[1]!.port, e[2]!.port, e[3]!.port]));
    for (const url of all()) await eventually(async () => (await workersOf(url)).length === 4);
    // An engine restarts: its cache comes back empty and its sequences start again at 0 (it must be idle for that).
    await eventually(async () => (await put(`${e[1]!.url}/sim/push`, { restart: true })).status === 200, 5000, 5);
    // An engine leaves.
    await dns.serve(records([e[1]!.port, e[2]!.port, e[3]!.port]));
    for (const url of all()) await eventually(async () => (await workersOf(url)).length === 3);
    // The process replica is killed and started again.
    third.cli.child.kill('SIGKILL');
    await third.cli.exited(5000);
    third = await processReplica();
    await eventually(async () => (await workersOf(third.url)).length === 3);
    const at = answered.ok;
    await eventually(async () => answered.ok >= at + 20);
    stop = true;
    await Promise.all(loops);

    expect(unanswered).toEqual([]);
    // Nothing failed on the router's side: no request errored, none was logged as a router error.
    expect(errorCodes).toEqual([]);
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(answered.ok).toBeGreaterThan(40);
    const expected = [e[1]!.url, e[2]!.url, e[3]!.url].sort();
    for (const url of all()) expect(await workersOf(url)).toEqual(expected);
    // Once events settle, the replicas hold the same index, the restarted one included.
    await eventually(
      async () => {
        const digests = await Promise.all(all().map(async (u) => (await stateOf(u)).prefix_index));
        return digests.every((d) => d.digest === digests[0]!.digest && d.blocks === digests[0]!.blocks) && digests[0]!.blocks > 0;
      },
      10_000,
      100,
    );
  }, 60_000);
});
