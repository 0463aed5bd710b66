import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { FakeKubeApi, endpointSlice, inferencePool, pod } from '../helpers/fake-kube-api.js';
import { runCli } from '../helpers/cli.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { memoryLogger, startTestRouter } from '../helpers/router.js';
import { steadyChats } from '../helpers/chat-load.js';

/**
 * `--service-discovery` against a local stand-in for the Kubernetes API server
 * (docs/http-edge.md §Kubernetes discovery): hand-made v1 Pod and discovery.k8s.io/v1
 * EndpointSlice lists and watch streams, served over HTTP on 127.0.0.1 to the real
 * client, which reads it through --kubeconfig. The pods and endpoints point at simulated
 * engines on 127.0.0.x; the router follows ADDED, MODIFIED and DELETED under load,
 * resumes a dropped watch from its last resourceVersion, and lists again on 410 Gone.
 * With --inference-pool, an inference.networking.k8s.io/v1 InferencePool names the pods
 * and their port, and the router follows the pool as it changes.
 */
const PODS = '/api/v1/namespaces/inference/pods';
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/inference/endpointslices';
const POOLS = '/apis/inference.networking.k8s.io/v1/namespaces/inference/inferencepools';

let api: FakeKubeApi | undefined;
let fleets: SimFleet[] = [];
let router: Router | undefined;

afterEach(async () => {
  await router?.close();
  for (const f of fleets) await f.close();
  await api?.close();
  [api, router, fleets] = [undefined, undefined, []];
});

async function freeTcpPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** One simulated engine per address, all on the same port, as pods of one Deployment are. */
async function engines(port: number, hosts: string[]): Promise<string[]> {
  const urls: string[] = [];
  for (const host of hosts) {
    const f = await startSimFleet({ workers: 1, speedup: 20, host, portBase: port });
    fleets.push(f);
    urls.push(f.urls[0]!);
  }
  return urls;
}

const workerUrls = (r: Router): string[] => r.registry.workers.map((w) => w.url).sort();
const same = (r: Router, urls: string[]) => async () => JSON.stringify(workerUrls(r)) === JSON.stringify([...urls].sort());

const load = (r: Router): ReturnType<typeof steadyChats> => steadyChats(r.url);

/** The fleet as a user sees it: the workers of GET /admin/state. */
async function adminWorkers(r: Router): Promise<string[]> {
  const res = await rawRequest(`${r.url}/admin/state`);
  return (JSON.parse(res.text) as { workers: { url: string }[] }).workers.map((w) => w.url).sort();
}
const listed = (r: Router, urls: string[]) => async () => JSON.stringify(await adminWorkers(r)) === JSON.stringify([...urls].sort());

describe('--service-discovery', () => {
  it('follows pods by label as they are added, changed and deleted, under load, losing nothing', async () => {
    const port = await freeTcpPort();
    const [a, b, c] = await engines(port, ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    api = await new FakeKubeApi().start();
    api.put(PODS, pod('engine-a', { ip: '127.0.0.2' }));
    api.put(PODS, pod('engine-b', { ip: '127.0.0.3' }));
    // Not workers: another app's pod, a pod still starting, a pod not yet scheduled.
    api.put(PODS, pod('other', { ip: '127.0.0.5', labels: { app: 'other' } }));
    api.put(PODS, pod('engine-c', { ip: '127.0.0.4', phase: 'Pending', ready: false }));
    api.put(PODS, pod('engine-d', { phase: 'Pending', ready: false }));

    const r = (router = await startTestRouter([], {
      serviceDiscovery: true,
      selector: ['app=sglang'],
      serviceDiscoveryPort: port,
      kubeconfig: api.kubeconfig(),
      policy: 'round_robin',
      adminToken: 'secret',
      shutdownDrainSecs: 10,
    }));
    // The fleet at start is in the pool at once; the namespace is the kubeconfig context's.
    expect(workerUrls(r)).toEqual([a!, b!]);
    const [list] = api.lists(PODS);
    expect(list?.query.get('labelSelector')).toBe('app=sglang');
    expect(list?.token).toBe(api.token);
    await eventually(async () => api!.watches(PODS).length === 1);
    expect(api.watches(PODS)[0]!.query.get('resourceVersion')).toBe(api.resourceVersion);
    expect(api.watches(PODS)[0]!.query.get('allowWatchBookmarks')).toBe('true');

    // Discovery owns the fleet: the admin API says so.
    const refused = await rawRequest(`${r.url}/admin/workers`, {
      method: 'POST',
      body: JSON.stringify({ url: c }),
      headers: { authorization: 'Bearer secret', 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.text).error).toMatchObject({ code: 'discovery_managed', message: expect.stringContaining('kubernetes') });

    const traffic = load(r);
    await eventually(async () => traffic.done() >= 10);
    // MODIFIED: c turns Running and Ready, and joins.
    api.put(PODS, pod('engine-c', { ip: '127.0.0.4' }));
    await eventually(same(r, [a!, b!, c!]));
    await eventually(async () => r.state().workers.every((w) => w.healthy));
    // MODIFIED: a is being deleted (its containers still run): out.
    api.put(PODS, pod('engine-a', { ip: '127.0.0.2', deleting: true }));
    await eventually(same(r, [b!, c!]));
    // MODIFIED: b fails its readiness probe: out. A Ready pod without its label is no worker either.
    api.put(PODS, pod('engine-b', { ip: '127.0.0.3', ready: false }));
    api.put(PODS, pod('other', { ip: '127.0.0.5', labels: { app: 'other' } }));
    await eventually(same(r, [c!]));
    // DELETED, then ADDED again at the same address.
    api.delete(PODS, 'engine-a');
    api.put(PODS, pod('engine-b2', { ip: '127.0.0.3' }));
    await eventually(same(r, [b!, c!]));
    const at = traffic.done();
    await eventually(async () => traffic.done() >= at + 20);
    expect(await traffic.stop()).toEqual([]);
    const kinds = r.state().events.map((e) => `${e.kind} ${e.worker}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        `worker_added ${c}`,
        `worker_admitted ${c}`,
        `worker_removed ${a}`,
        `worker_removed ${b}`,
        `worker_added ${b}`,
      ]),
    );
    // One list, one watch: nothing above needed more.
    expect(api.lists(PODS)).toHaveLength(1);
    expect(api.watches(PODS)).toHaveLength(1);
  });

  it('resumes a dropped watch from its last resourceVersion, and lists again on 410 Gone (a status or an ERROR event)', async () => {
    const port = await freeTcpPort();
    const [a, b, c] = await engines(port, ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    api = await new FakeKubeApi().start();
    api.put(PODS, pod('engine-a', { ip: '127.0.0.2' }));
    const r = (router = await startTestRouter([], {
      serviceDiscovery: true,
      selector: ['app=sglang'],
      serviceDiscoveryPort: port,
      kubeconfig: api.kubeconfig(),
    }));
    expect(workerUrls(r)).toEqual([a!]);
    await eventually(async () => api!.openWatches === 1);
    const seen = api.put(PODS, pod('engine-b', { ip: '127.0.0.3' }));
    await eventually(same(r, [a!, b!]));

    // Dropped mid-stream; a change lands while no watch is open. The client resumes from
    // the last version it saw, not from its list, and gets the missed change from there.
    api.dropWatches();
    api.put(PODS, pod('engine-c', { ip: '127.0.0.4' }));
    await eventually(same(r, [a!, b!, c!]));
    const resumed = api.watches(PODS);
    expect(resumed).toHaveLength(2);
    expect(resumed[1]!.query.get('resourceVersion')).toBe(seen);
    expect(resumed[1]!.query.get('labelSelector')).toBe('app=sglang');
    expect(api.lists(PODS)).toHaveLength(1);

    // A BOOKMARK moves the version without a change: the next resume starts from it.
    await eventually(async () => api!.openWatches === 1);
    const marked = api.bookmark();
    await new Promise((res) => setTimeout(res, 100));
    api.dropWatches();
    await eventually(async () => api!.watches(PODS).length === 3);
    expect(api.watches(PODS)[2]!.query.get('resourceVersion')).toBe(marked);
    expect(workerUrls(r)).toEqual([a!, b!, c!]);

    // The history is compacted while no watch is open: the resumed watch is answered 410,
    // and the client lists again, which shows the deletion it could not watch.
    await eventually(async () => api!.openWatches === 1);
    api.dropWatches();
    api.delete(PODS, 'engine-a');
    api.compact();
    await eventually(same(r, [b!, c!]));
    expect(api.lists(PODS)).toHaveLength(2);
    await eventually(async () => api!.openWatches === 1);
    const afterList = api.watches(PODS).at(-1)!;
    expect(afterList.query.get('resourceVersion')).toBe(api.resourceVersion);

    // An ERROR event with code 410 on an open watch: list again.
    api.expireWatches();
    await eventually(async () => api!.lists(PODS).length === 3);
    await eventually(async () => api!.openWatches === 1);
    api.delete(PODS, 'engine-c');
    await eventually(same(r, [b!]));
  });

  it("watches a Service's EndpointSlices with --service-discovery-service: ready endpoints, the slice's port", async () => {
    const port = await freeTcpPort();
    const [a, b, c] = await engines(port, ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    api = await new FakeKubeApi().start();
    api.put(
      SLICES,
      endpointSlice('engines-abc', 'engines', [{ name: 'http', port }], [{ ip: '127.0.0.2' }, { ip: '127.0.0.3', ready: false }]),
    );
    // ready unset counts as ready; another Service's slice is not ours.
    api.put(SLICES, endpointSlice('engines-def', 'engines', [{ name: 'http', port }], [{ ip: '127.0.0.4', ready: null }]));
    api.put(SLICES, endpointSlice('metrics-xyz', 'metrics', [{ port }], [{ ip: '127.0.0.5' }]));
    const r = (router = await startTestRouter([], {
      serviceDiscovery: true,
      serviceDiscoveryService: 'engines',
      kubeconfig: api.kubeconfig(),
      // A removed worker's in-flight requests finish within the drain time.
      shutdownDrainSecs: 10,
    }));
    expect(workerUrls(r)).toEqual([a!, c!]);
    expect(api.lists(SLICES)[0]!.query.get('labelSelector')).toBe('kubernetes.io/service-name=engines');
    await eventually(async () => api!.openWatches === 1);
    const traffic = load(r);
    await eventually(async () => traffic.done() >= 10);
    // b turns ready; the other slice goes.
    api.put(SLICES, endpointSlice('engines-abc', 'engines', [{ name: 'http', port }], [{ ip: '127.0.0.2' }, { ip: '127.0.0.3' }]));
    await eventually(same(r, [a!, b!, c!]));
    api.delete(SLICES, 'engines-def');
    await eventually(same(r, [a!, b!]));
    const at = traffic.done();
    await eventually(async () => traffic.done() >= at + 20);
    expect(await traffic.stop()).toEqual([]);
  });

  it('--service-discovery-port picks the slice port of that number; a slice without it stands for no worker', async () => {
    const port = await freeTcpPort();
    const [a] = await engines(port, ['127.0.0.2']);
    api = await new FakeKubeApi().start();
    api.put(
      SLICES,
      endpointSlice(
        'two-ports',
        'engines',
        [
          { name: 'metrics', port: 9 },
          { name: 'http', port },
        ],
        [{ ip: '127.0.0.2' }],
      ),
    );
    api.put(SLICES, endpointSlice('metrics-only', 'engines', [{ name: 'metrics', port: 9 }], [{ ip: '127.0.0.3' }]));
    const r = (router = await startTestRouter([], {
      serviceDiscovery: true,
      serviceDiscoveryService: 'engines',
      serviceDiscoveryPort: port,
      kubeconfig: api.kubeconfig(),
    }));
    expect(workerUrls(r)).toEqual([a!]);
  });

  it('starts with no worker while the API server refuses, and follows it once it answers', async () => {
    const port = await freeTcpPort();
    const [a] = await engines(port, ['127.0.0.2']);
    api = await new FakeKubeApi().start();
    api.put(PODS, pod('engine-a', { ip: '127.0.0.2' }));
    const file = api.kubeconfig();
    // A wrong token: 401 to every call. The router starts, empty, and keeps asking.
    const { readFileSync, writeFileSync } = await import('node:fs');
    writeFileSync(file, readFileSync(file, 'utf8').replace(`token: ${api.token}`, 'tokenFile: token'));
    writeFileSync(new URL(`file://${file.replace(/kubeconfig$/, 'token')}`), 'wrong\n');
    const r = (router = await startTestRouter([], {
      serviceDiscovery: true,
      selector: ['app=sglang'],
      serviceDiscoveryPort: port,
      kubeconfig: file,
    }));
    expect(workerUrls(r)).toEqual([]);
    expect((await rawRequest(`${r.url}/readyz`)).status).toBe(503);
    // The token file is read again before each call, as a rotated service-account token is.
    writeFileSync(new URL(`file://${file.replace(/kubeconfig$/, 'token')}`), `${api.token}\n`);
    await eventually(same(r, [a!]), 10_000);
    await eventually(async () => (await rawRequest(`${r.url}/readyz`)).status === 200);
  });

  it('check-config --probe lists once, prints what it found (discovery in --json) and probes those workers', async () => {
    const port = await freeTcpPort();
    const [a, b] = await engines(port, ['127.0.0.2', '127.0.0.3']);
    api = await new FakeKubeApi().start();
    api.put(PODS, pod('engine-a', { ip: '127.0.0.2' }));
    api.put(PODS, pod('engine-b', { ip: '127.0.0.3' }));
    api.put(PODS, pod('engine-c', { ip: '127.0.0.4', ready: false }));
    const flags = [
      '--service-discovery',
      '--selector',
      'app=sglang',
      '--service-discovery-port',
      String(port),
      '--kubeconfig',
      api.kubeconfig(),
    ];
    const probed = await runCli(['check-config', ...flags, '--probe']);
    expect(probed.code).toBe(0);
    expect(probed.stdout).toContain(`Kubernetes discovery: pods app=sglang in namespace inference lists 2 workers: ${a} ${b}`);
    const json = JSON.parse((await runCli(['check-config', ...flags, '--probe', '--json'])).stdout) as {
      discovery: { mode: string; name: string; answered: boolean; urls: string[] };
      probe: { workers: Array<{ url: string; reachable: boolean }> };
    };
    expect(json.discovery).toEqual({ mode: 'kubernetes', name: 'pods app=sglang in namespace inference', answered: true, urls: [a, b] });
    expect(json.probe.workers.map((w) => [w.url, w.reachable])).toEqual([
      [a, true],
      [b, true],
    ]);
    // Listed once, watched never.
    expect(api.lists(PODS)).toHaveLength(2);
    expect(api.watches(PODS)).toHaveLength(0);

    // An API server that refuses: no answer, and serve would start empty and keep asking.
    const other = ['--service-discovery', '--service-discovery-service', 'engines', '--service-discovery-namespace', 'prod'];
    const { writeFileSync } = await import('node:fs');
    const badToken = api.kubeconfig().replace(/kubeconfig$/, 'bad-kubeconfig');
    writeFileSync(badToken, (await import('node:fs')).readFileSync(api.kubeconfig(), 'utf8').replace(api.token, 'wrong'));
    const refused = await runCli(['check-config', ...other, '--kubeconfig', badToken, '--probe']);
    expect(refused.code).toBe(0);
    expect(refused.stdout).toContain(
      'Kubernetes discovery: EndpointSlices of Service engines in namespace prod gave no answer (list /apis/discovery.k8s.io/v1/namespaces/prod/endpointslices: HTTP 401 Unauthorized)',
    );
    // Credentials that cannot be read: serve would not start, and the probe says so.
    const missing = await runCli(['check-config', ...other, '--kubeconfig', '/nonexistent/kubeconfig', '--probe', '--json']);
    const report = JSON.parse(missing.stdout) as { discovery: { answered: boolean; reason: string } };
    expect(report.discovery).toMatchObject({
      answered: false,
      reason: expect.stringContaining('--kubeconfig /nonexistent/kubeconfig cannot be read'),
    });
  });

  it('trusts an API server over TLS by its certificate-authority-data, or with insecure-skip-tls-verify, and not otherwise', async () => {
    // A self-signed certificate for 127.0.0.1, made here by openssl (Debian's ca-certificates depends on it).
    const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-kube-tls-'));
    try {
      const made = spawnSync('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ]);
      if (made.error || made.status !== 0)
        throw new Error(`openssl could not make a test certificate: ${made.error?.message ?? made.stderr}`);
      const cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
      const port = await freeTcpPort();
      const [a] = await engines(port, ['127.0.0.2']);
      api = await new FakeKubeApi({ key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert }).start();
      api.put(PODS, pod('engine-a', { ip: '127.0.0.2' }));
      const settings = { serviceDiscovery: true, selector: ['app=sglang'], serviceDiscoveryPort: port };
      const trusted = api.kubeconfig('inference', [`certificate-authority-data: ${Buffer.from(cert).toString('base64')}`]);
      const r = (router = await startTestRouter([], { ...settings, kubeconfig: trusted }));
      expect(workerUrls(r)).toEqual([a!]);
      await r.close();
      const insecure = api.kubeconfig('inference', ['insecure-skip-tls-verify: true']);
      const r2 = (router = await startTestRouter([], { ...settings, kubeconfig: insecure }));
      expect(workerUrls(r2)).toEqual([a!]);
      await r2.close();
      // Neither: the certificate is not trusted, nothing is listed, and the router starts empty.
      const lists = api.lists(PODS).length;
      router = await startTestRouter([], { ...settings, kubeconfig: api.kubeconfig() });
      expect(workerUrls(router)).toEqual([]);
      expect(api.lists(PODS)).toHaveLength(lists);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('--inference-pool', () => {
  const vllm = (name: string, ip: string, o: Parameters<typeof pod>[1] = {}) => pod(name, { labels: { app: 'vllm' }, ip, ...o });

  it("follows the pods the pool's selector picks, on its target port, and not another pool's", async () => {
    const port = await freeTcpPort();
    const [a, b, c] = await engines(port, ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    api = await new FakeKubeApi().start();
    api.put(POOLS, inferencePool('llama-pool', { matchLabels: { app: 'vllm' }, port }));
    // Another pool in the namespace, and pods that are not this pool's workers.
    api.put(POOLS, inferencePool('other-pool', { matchLabels: { app: 'sglang' }, port }));
    api.put(PODS, vllm('engine-a', '127.0.0.2'));
    api.put(PODS, vllm('engine-b', '127.0.0.3'));
    api.put(PODS, vllm('engine-c', '127.0.0.4', { ready: false }));
    api.put(PODS, pod('sglang-a', { labels: { app: 'sglang' }, ip: '127.0.0.5' }));
    const r = (router = await startTestRouter([], {
      serviceDiscovery: true,
      inferencePool: 'llama-pool',
      kubeconfig: api.kubeconfig(),
      shutdownDrainSecs: 10,
    }));
    // The fleet at start: the pool, then its pods, read before the router answers.
    expect(await adminWorkers(r)).toEqual([a!, b!]);
    expect(api.lists(POOLS).map((l) => l.query.get('fieldSelector'))).toEqual(['metadata.name=llama-pool']);
    expect(api.lists(PODS).map((l) => l.query.get('labelSelector'))).toEqual(['app=vllm']);
    await eventually(async () => api!.openWatches === 2);
    expect(api.watches(POOLS)[0]!.query.get('fieldSelector')).toBe('metadata.name=llama-pool');

    const traffic = load(r);
    await eventually(async () => traffic.done() >= 10);
    // The pods' watch works as without a pool: c turns Ready and joins, a is deleted and leaves.
    api.put(PODS, vllm('engine-c', '127.0.0.4'));
    await eventually(listed(r, [a!, b!, c!]));
    api.delete(PODS, 'engine-a');
    await eventually(listed(r, [b!, c!]));
    // The gateway writes the pool's status often; a pool whose selector and port stay is no reason to list pods again.
    api.put(POOLS, { ...inferencePool('llama-pool', { matchLabels: { app: 'vllm' }, port }), status: { parents: [] } });
    api.put(POOLS, inferencePool('other-pool', { matchLabels: { app: 'vllm' }, port: 1 }));
    await new Promise((res) => setTimeout(res, 200));
    expect(api.lists(PODS)).toHaveLength(1);
    expect(await adminWorkers(r)).toEqual([b!, c!]);
    const at = traffic.done();
    await eventually(async () => traffic.done() >= at + 20);
    expect(await traffic.stop()).toEqual([]);

    // check-config --probe reads the pool, then lists its pods once.
    const probed = await runCli([
      'check-config',
      '--service-discovery',
      '--inference-pool',
      'llama-pool',
      '--kubeconfig',
      api.kubeconfig(),
      '--probe',
    ]);
    expect(probed.code).toBe(0);
    expect(probed.stdout).toContain(
      `Kubernetes discovery: InferencePool llama-pool (pods app=vllm on port ${port}) in namespace inference lists 2 workers: ${b} ${c}`,
    );
  });

  it("follows the pool's selector when it changes, under load, losing nothing", async () => {
    const port = await freeTcpPort();
    const [a, b, c] = await engines(port, ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    api = await new FakeKubeApi().start();
    api.put(POOLS, inferencePool('llama-pool', { matchLabels: { app: 'vllm', track: 'stable' }, port }));
    api.put(PODS, pod('stable-a', { labels: { app: 'vllm', track: 'stable' }, ip: '127.0.0.2' }));
    api.put(PODS, pod('stable-b', { labels: { app: 'vllm', track: 'stable' }, ip: '127.0.0.3' }));
    api.put(PODS, pod('canary-c', { labels: { app: 'vllm', track: 'canary' }, ip: '127.0.0.4' }));
    const r = (router = await startTestRouter([], {
      serviceDiscovery: true,
      inferencePool: 'llama-pool',
      kubeconfig: api.kubeconfig(),
      shutdownDrainSecs: 10,
    }));
    expect(await adminWorkers(r)).toEqual([a!, b!]);
    expect(api.lists(PODS)[0]!.query.get('labelSelector')).toBe('app=vllm,track=stable');
    await eventually(async () => api!.openWatches === 2);
    const traffic = load(r);
    await eventually(async () => traffic.done() >= 10);

    // The pool widens to both tracks: its pods are listed by the new selector, and the fleet diffed against them.
    api.put(POOLS, inferencePool('llama-pool', { matchLabels: { app: 'vllm' }, port }));
    await eventually(listed(r, [a!, b!, c!]));
    await eventually(async () => r.state().workers.every((w) => w.healthy));
    // Then moves to the canary alone. (Had it moved at once, the new pods would have had to
    // answer their first load poll before taking requests, as any joining worker must.)
    api.put(POOLS, inferencePool('llama-pool', { matchLabels: { app: 'vllm', track: 'canary' }, port }));
    await eventually(listed(r, [c!]));
    expect(api.lists(PODS).map((l) => l.query.get('labelSelector'))).toEqual([
      'app=vllm,track=stable',
      'app=vllm',
      'app=vllm,track=canary',
    ]);
    // One pods' watch, on the newest selector: the older ones are closed.
    await eventually(async () => api!.openWatches === 2);
    expect(api.watches(PODS).at(-1)!.query.get('labelSelector')).toBe('app=vllm,track=canary');
    // A canary pod that joins later is followed.
    api.put(PODS, pod('canary-d', { labels: { app: 'vllm', track: 'canary' }, ip: '127.0.0.2' }));
    await eventually(listed(r, [a!, c!]));
    const at = traffic.done();
    await eventually(async () => traffic.done() >= at + 20);
    expect(await traffic.stop()).toEqual([]);
  });

  it("moves every worker to the pool's new target port", async () => {
    const [oldPort, newPort] = [await freeTcpPort(), await freeTcpPort()];
    const [a1, b1] = await engines(oldPort, ['127.0.0.2', '127.0.0.3']);
    const [a2, b2] = await engines(newPort, ['127.0.0.2', '127.0.0.3']);
    api = await new FakeKubeApi().start();
    api.put(POOLS, inferencePool('llama-pool', { port: oldPort }));
    api.put(PODS, vllm('engine-a', '127.0.0.2'));
    api.put(PODS, vllm('engine-b', '127.0.0.3'));
    const r = (router = await startTestRouter([], { serviceDiscovery: true, inferencePool: 'llama-pool', kubeconfig: api.kubeconfig() }));
    expect(await adminWorkers(r)).toEqual([a1!, b1!]);
    await eventually(async () => api!.openWatches === 2);
    api.put(POOLS, inferencePool('llama-pool', { port: newPort }));
    await eventually(listed(r, [a2!, b2!]));
    await eventually(async () => r.state().workers.every((w) => w.healthy));
    const kinds = r.state().events.map((e) => `${e.kind} ${e.worker}`);
    expect(kinds).toEqual(
      expect.arrayContaining([`worker_removed ${a1}`, `worker_removed ${b1}`, `worker_added ${a2}`, `worker_added ${b2}`]),
    );
  });

  it('leaves the fleet as it is while the pool is gone or unreadable, says so once, and follows it when it is back', async () => {
    const port = await freeTcpPort();
    const [a, b, c] = await engines(port, ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    api = await new FakeKubeApi().start();
    api.put(POOLS, inferencePool('llama-pool', { port }));
    api.put(PODS, vllm('engine-a', '127.0.0.2'));
    api.put(PODS, vllm('engine-b', '127.0.0.3'));
    api.put(PODS, pod('next-c', { labels: { app: 'vllm-next' }, ip: '127.0.0.4' }));
    const log = memoryLogger();
    const r = (router = await startTestRouter(
      [],
      { serviceDiscovery: true, inferencePool: 'llama-pool', kubeconfig: api.kubeconfig() },
      log,
    ));
    expect(await adminWorkers(r)).toEqual([a!, b!]);
    await eventually(async () => api!.openWatches === 2);
    const missing = () => log.lines.filter((l) => l.level === 'warn' && l.msg.includes('InferencePool llama-pool is not found'));

    // Deleted: the router keeps its workers, and says why once.
    api.delete(POOLS, 'llama-pool');
    await eventually(async () => missing().length === 1);
    expect(missing()[0]!.msg).toBe(
      'Kubernetes discovery: InferencePool llama-pool is not found in namespace inference; the fleet stays as it is',
    );
    expect(await adminWorkers(r)).toEqual([a!, b!]);
    // Listed again while still gone (its watch's version expired): still the same fleet, and no second warning.
    api.expireWatches();
    await eventually(async () => api!.lists(POOLS).length === 2 && api!.openWatches === 2);
    expect(missing()).toHaveLength(1);
    expect(await adminWorkers(r)).toEqual([a!, b!]);
    // The pods the pool last named are still followed: one that goes is no worker.
    api.delete(PODS, 'engine-b');
    await eventually(listed(r, [a!]));

    // A pool being deleted, or one with no port, is no better than none; the fleet stays.
    api.put(POOLS, inferencePool('llama-pool', { port, deleting: true }));
    await eventually(async () => log.lines.some((l) => l.level === 'warn' && l.msg.includes('it is being deleted')));
    api.put(POOLS, inferencePool('llama-pool', { targetPorts: [] }));
    await eventually(async () => log.lines.some((l) => l.level === 'warn' && l.msg.includes('spec.targetPorts[0].number is not a port')));
    expect(await adminWorkers(r)).toEqual([a!]);

    // Back, naming other pods: followed, and the router says so.
    api.put(POOLS, inferencePool('llama-pool', { matchLabels: { app: 'vllm-next' }, port }));
    await eventually(listed(r, [c!]));
    expect(log.lines.some((l) => l.level === 'info' && l.msg.includes('the InferencePool is back'))).toBe(true);
    expect(missing()).toHaveLength(1);
  });

  it('starts with no worker while the pool is missing or its API is not served, and follows it once it is there', async () => {
    const port = await freeTcpPort();
    const [a] = await engines(port, ['127.0.0.2']);
    api = await new FakeKubeApi().start();
    api.put(PODS, vllm('engine-a', '127.0.0.2'));
    // No InferencePool CRD: the pools' list is answered 404.
    api.unserve(POOLS);
    const log = memoryLogger();
    const r = (router = await startTestRouter(
      [],
      { serviceDiscovery: true, inferencePool: 'llama-pool', kubeconfig: api.kubeconfig() },
      log,
    ));
    expect(await adminWorkers(r)).toEqual([]);
    expect((await rawRequest(`${r.url}/readyz`)).status).toBe(503);
    const failed = log.lines.filter((l) => l.level === 'warn' && l.msg.includes('list failed'));
    expect(failed).toHaveLength(1);
    expect(failed[0]!.fields).toMatchObject({
      watching: 'InferencePool llama-pool in namespace inference',
      reason: expect.stringContaining('404'),
    });
    expect(api.lists(PODS)).toHaveLength(0);

    // Served, but no such pool yet: still nothing, said once.
    api.serve(POOLS);
    await eventually(
      async () => log.lines.some((l) => l.level === 'warn' && l.msg.includes('is not found in namespace inference')),
      10_000,
    );
    expect(await adminWorkers(r)).toEqual([]);
    api.put(POOLS, inferencePool('llama-pool', { port }));
    await eventually(listed(r, [a!]));
    await eventually(async () => (await rawRequest(`${r.url}/readyz`)).status === 200);
    // check-config --probe says the same of a pool that is not there.
    const probed = await runCli([
      'check-config',
      '--service-discovery',
      '--inference-pool',
      'nope',
      '--kubeconfig',
      api.kubeconfig(),
      '--probe',
    ]);
    expect(probed.stdout).toContain(
      'Kubernetes discovery: InferencePool nope in namespace inference gave no answer (InferencePool nope is not found in namespace inference)',
    );
  });
});
