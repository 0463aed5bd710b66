import { readFileSync, statSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';
import { eventually, put } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const rustMetrics = readFileSync(path.join(root, 'test/prometheus/fixtures/sgl-router-metrics.txt'), 'utf8');

/** The CLI tests run the built binary; a stale dist/ would test old code. */
function assertBuilt(): void {
  for (const dir of ['src/top', 'src/fleet', 'src/tui', 'src/tui/components']) {
    for (const f of readdirSync(path.join(root, dir)).filter((n) => /\.tsx?$/.test(n))) {
      const out = path.join(root, 'dist', dir, f.replace(/\.tsx?$/, '.js'));
      if (
        statSync(out, { throwIfNoEntry: false })?.mtimeMs === undefined ||
        statSync(out).mtimeMs < statSync(path.join(root, dir, f)).mtimeMs
      ) {
        throw new Error(`dist/ is missing or older than ${dir}/${f}: run npx tsc -p . first (npm test does)`);
      }
    }
  }
}

const servers: Server[] = [];
async function serveText(routes: Record<string, string>): Promise<string> {
  const server = createServer((req, res) => {
    const body = routes[req.url ?? ''];
    if (body === undefined) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    else res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const PINNED = [9, 4, 0];
let fleet: SimFleet;
let router: Router;
let replica: Router;
let guarded: Router;

beforeAll(async () => {
  assertBuilt();
  fleet = await startSimFleet({ workers: 3, portBase: 0, speedup: 50 });
  router = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
  replica = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
  guarded = await startTestRouter(fleet.urls, { workerQueueLimit: 6, adminToken: 's3cret' });
  await Promise.all(fleet.urls.map((u, i) => put(`${u}/sim/load`, { num_waiting_reqs: PINNED[i] })));
  // Every router's sampler (50 ms in tests) has seen the pinned counts.
  for (const r of [router, replica, guarded]) {
    await eventually(async () => r.state().workers.every((w) => w.waiting === PINNED[fleet.urls.indexOf(w.url)]), 5000);
  }
});

afterAll(async () => {
  await Promise.all([router?.close(), replica?.close(), guarded?.close()]);
  await fleet?.close();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

const rowOf = (out: string, url: string): string | undefined => out.split('\n').find((l) => l.startsWith(url.replace('http://', '')));

describe('routerctl top against a running router (admin API)', () => {
  it('--once prints the pinned waiting counts against the limit, GATED on the worker over it', async () => {
    const r = await runCli(['top', '--url', router.url, '--once']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^router http:\/\/127\.0\.0\.1:\d+ · routerctl test · model .* · policy cache_aware · limit 6/);
    expect(r.stdout).toContain('source admin API');
    expect(rowOf(r.stdout, fleet.urls[0]!)).toMatch(/\s9\/6\s.*GATED/);
    expect(rowOf(r.stdout, fleet.urls[1]!)).toMatch(/\s4\/6\s.*\sno\s/);
    expect(rowOf(r.stdout, fleet.urls[2]!)).toMatch(/\s0\/6\s.*\sno\s/);
    // Sorted by waiting: the longest queue first.
    const order = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('127.0.0.1:'))
      .map((l) => l.split(/\s+/)[1]);
    expect(order).toEqual(['9/6', '4/6', '0/6']);
    expect(r.stdout).not.toMatch(/\u001b\[/);
  });

  it('--json prints the merged state with the pinned waiting counts', async () => {
    const r = await runCli(['top', '--url', router.url, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as {
      source: string;
      router: { worker_queue_limit: number };
      workers: Array<{ url: string; waiting: number; gated: boolean; fresh: boolean }>;
      replicas: unknown[];
    };
    expect(j.source).toBe('admin');
    expect(j.router.worker_queue_limit).toBe(6);
    expect(j.replicas).toHaveLength(1);
    for (const [i, url] of fleet.urls.entries()) {
      expect(j.workers.find((w) => w.url === url)).toMatchObject({ waiting: PINNED[i], gated: PINNED[i]! >= 6, fresh: true });
    }
  });

  it('merges replicas into one fleet with a per-replica column', async () => {
    const j = JSON.parse((await runCli(['top', '--url', router.url, '--url', replica.url, '--json'])).stdout) as {
      replicas: Array<{ url: string }>;
      workers: Array<{ waiting: number; inflight_by_replica: number[] }>;
    };
    expect(j.replicas.map((x) => x.url)).toEqual([router.url, replica.url]);
    expect(j.workers).toHaveLength(3);
    for (const w of j.workers) expect(w.inflight_by_replica).toHaveLength(2);
    const once = await runCli(['top', '--url', router.url, '--url', replica.url, '--once']);
    expect(once.stdout).toContain('BY-REPLICA');
    expect(rowOf(once.stdout, fleet.urls[0]!)).toMatch(/9\/6 .* 0\|0 /);
  });

  it("--source prometheus reads the same router's /metrics, and says what it cannot show", async () => {
    const r = await runCli(['top', '--url', router.url, '--once', '--source', 'prometheus']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('source prometheus /metrics');
    expect(rowOf(r.stdout, fleet.urls[0]!)).toMatch(/^\S+\s+9\s/);
    expect(r.stdout).toMatch(/cannot show \(prometheus \/metrics\): .*queue limit/);
  });

  it('without a terminal and without --once, prints the table once (no animation into a pipe)', async () => {
    const r = await runCli(['top', '--url', router.url]);
    expect(r.code).toBe(0);
    expect(rowOf(r.stdout, fleet.urls[0]!)).toMatch(/9\/6/);
  });

  it('honours NO_COLOR even when colour is forced, and colours otherwise', async () => {
    const forced = await runCli(['top', '--url', router.url, '--once'], { env: { NO_COLOR: '', FORCE_COLOR: '1' } });
    expect(forced.stdout).toMatch(/\u001b\[31m/);
    const off = await runCli(['top', '--url', router.url, '--once'], { env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
    expect(off.stdout).not.toMatch(/\u001b/);
  });
});

describe("routerctl top against a Prometheus endpoint with the reference router's names", () => {
  let url: string;
  beforeAll(async () => {
    url = await serveText({ '/metrics': rustMetrics });
  });

  it('--once shows the decision counters and the diverted-overlap histogram', async () => {
    const r = await runCli(['top', '--url', url, '--once']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('source prometheus /metrics');
    expect(r.stdout).toContain('policy cache_aware (from metrics)');
    expect(r.stdout).toContain('cache_hit 9013 · cache_miss 655 · cache_worker_queued 39 · all_queued 5');
    expect(r.stdout).toContain('selection failures 8');
    expect(r.stdout).toMatch(/diverted overlap {2}39 diversions, mean 263\.9 blocks/);
    expect(r.stdout).toMatch(/≤8 +≈128 tok +29 +#+/);
    expect(rowOf(r.stdout, 'http://10.0.0.1:30000')).toMatch(/–\s+–\s+12\s/);
    expect(r.stdout).toMatch(/cannot show \(prometheus \/metrics\): engine queues/);
  });

  it('--json carries the decisions and the histogram, with null where the source cannot tell', async () => {
    const r = await runCli(['top', '--url', url, '--json']);
    const j = JSON.parse(r.stdout) as {
      decisions: Record<string, number>;
      diverted_overlap_blocks: { count: number; sum: number };
      workers: Array<{ url: string; waiting: null; inflight: number }>;
      alerts: { all_queued: null };
      cannot_show: string[];
    };
    expect(j.decisions).toEqual({ cache_hit: 9013, cache_miss: 655, cache_worker_queued: 39, all_queued: 5 });
    expect(j.diverted_overlap_blocks).toMatchObject({ count: 39, sum: 10294 });
    expect(j.workers[0]).toMatchObject({ url: 'http://10.0.0.1:30000', waiting: null, inflight: 12 });
    expect(j.alerts.all_queued).toBeNull();
    expect(j.cannot_show).toContain('engine queues');
  });

  it('--source admin refuses it in one line', async () => {
    const r = await runCli(['top', '--url', url, '--once', '--source', 'admin']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error RCTL_E_NOT_A_ROUTER: .*no routerctl admin API/);
  });

  it("an engine's /metrics is not a router's", async () => {
    const engine = await serveText({
      '/metrics': readFileSync(path.join(root, 'test/prometheus/fixtures/sglang-engine-metrics.txt'), 'utf8'),
    });
    const r = await runCli(['top', '--url', engine, '--once']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error RCTL_E_NOT_A_ROUTER: .*SGLang engine/);
  });
});

describe("routerctl top against other routers' recorded /metrics", () => {
  it.each([
    ['sgl-router-classic-metrics.txt', 'classic sgl-router', 'http://10.0.0.2:30000', /half_open\s*$/, 3],
    ['smg-metrics.txt', 'Shepherd Model Gateway', 'http://10.0.1.2:30000', /11\/?\S*\s+21\s+22\s/, 3],
    ['smg-1.13.0-metrics.txt', 'Shepherd Model Gateway', 'http://127.0.0.1:41001', /\s0\s+0\s+0\s.*closed\s*$/, 2],
    ['vllm-router-0.1.17-metrics.txt', 'vLLM router', 'http://127.0.0.1:41001', /\s0\s.*closed\s*$/, 2],
  ])(
    '%s: the header names the router, workers show what it reports, the rest is listed as missing',
    async (file, name, url, row, workers) => {
      const served = await serveText({ '/metrics': readFileSync(path.join(root, 'test/prometheus/fixtures', file), 'utf8') });
      const r = await runCli(['top', '--url', served, '--once']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`source prometheus /metrics (${name})`);
      expect(rowOf(r.stdout, url)).toMatch(row);
      expect(r.stdout).toMatch(/cannot show \(prometheus \/metrics[^)]*\)\): .*queue limit/);
      const j = JSON.parse((await runCli(['top', '--url', served, '--json'])).stdout) as { workers: unknown[]; latency?: unknown };
      expect(j.workers.length).toBe(workers);
    },
  );
});

describe('routerctl top failures: one line, non-zero', () => {
  it('an unreachable router', async () => {
    const port = await closedPort();
    for (const flag of ['--once', '--json']) {
      const r = await runCli(['top', '--url', `http://127.0.0.1:${port}`, flag]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`error RCTL_E_UNREACHABLE: cannot reach the router at http://127.0.0.1:${port}: connection refused\n`);
    }
  });

  it('a missing or wrong token; the right one, by flag or environment, works', async () => {
    const none = await runCli(['top', '--url', guarded.url, '--once']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error RCTL_E_UNAUTHORIZED: the router at .* requires an admin token \(401\)/);
    const wrong = await runCli(['top', '--url', guarded.url, '--json', '--token', 'nope']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(/^error RCTL_E_UNAUTHORIZED: the router at .* refused the admin token/);
    expect((await runCli(['top', '--url', guarded.url, '--once', '--token', 's3cret'])).code).toBe(0);
    const env = await runCli(['top', '--url', guarded.url, '--json'], { env: { ROUTERCTL_ADMIN_TOKEN: 's3cret' } });
    expect(env.code).toBe(0);
    expect(JSON.parse(env.stdout).workers).toHaveLength(3);
  });

  it('usage errors exit 2', async () => {
    expect((await runCli(['top', '--url', 'ftp://x', '--once'])).code).toBe(2);
    expect((await runCli(['top', '--interval-ms', '10', '--once'])).code).toBe(2);
  });
});

/** A row of --once's replica table: the replica's URL, its state and the age of its last answer. */
const replicaRow = (out: string, url: string): string | undefined => out.split('\n').find((l) => l.startsWith(`${url} `));

describe('routerctl top over replicas up, draining and down (docs/metrics-and-admin.md §Replica states)', () => {
  type Replicas = { replicas: Array<{ url: string; state: string; last_answer_ms: number | null; live: boolean; error: string | null }> };

  it('every replica up: each row says so with the age of its answer, and exit 0', async () => {
    const r = await runCli(['top', '--url', router.url, '--url', replica.url, '--once']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^REPLICA +STATE +LAST ANSWER$/m);
    for (const url of [router.url, replica.url]) expect(replicaRow(r.stdout, url)).toMatch(/^\S+ +up +\d+ms ago$/);
  });

  it('one live and one killed replica: --once prints the live fleet, marks the other down, and exits 3', async () => {
    const killed = await startTestRouter(fleet.urls, { workerQueueLimit: 6 });
    // It answers, then it is gone: its listener closed, its connections cut.
    expect((await runCli(['top', '--url', killed.url, '--once'])).code).toBe(0);
    await killed.close();
    const r = await runCli(['top', '--url', router.url, '--url', killed.url, '--once']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(3);
    expect(replicaRow(r.stdout, router.url)).toMatch(/^\S+ +up +\d+ms ago$/);
    expect(replicaRow(r.stdout, killed.url)).toMatch(/^\S+ +down +never$/);
    expect(r.stdout).toContain(`DOWN ${killed.url}: cannot reach the router at ${killed.url}: connection refused (not counted)`);
    // The live replica's fleet, its per-replica column blank for the one down.
    expect(rowOf(r.stdout, fleet.urls[0]!)).toMatch(/\s9\/6\s.*\s0\|–\s.*GATED/);
    expect(rowOf(r.stdout, fleet.urls[1]!)).toMatch(/\s4\/6\s/);

    const json = await runCli(['top', '--url', router.url, '--url', killed.url, '--json']);
    expect(json.code).toBe(0);
    const j = JSON.parse(json.stdout) as Replicas & { workers: Array<{ url: string; waiting: number }> };
    expect(j.replicas[0]).toMatchObject({ url: router.url, state: 'up', live: true, error: null });
    expect(j.replicas[0]!.last_answer_ms).toBeGreaterThanOrEqual(0);
    expect(j.replicas[1]).toMatchObject({ url: killed.url, state: 'down', live: false, last_answer_ms: null });
    expect(j.replicas[1]!.error).toMatch(/connection refused/);
    expect(j.workers.find((w) => w.url === fleet.urls[0])!.waiting).toBe(9);
  });

  it('a draining replica (its shutdown begun, /readyz 503) shows as draining, read through the admin API or /metrics', async () => {
    const draining = await startTestRouter(fleet.urls, { workerQueueLimit: 6, shutdownDrainSecs: 30 });
    let endPause!: () => void;
    const stopping = draining.shutdown({ skipPause: new Promise<void>((resolve) => (endPause = resolve)) });
    try {
      const readyz = await fetch(`${draining.url}/readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.json()).toMatchObject({ status: 'draining' });
      for (const source of ['auto', 'prometheus']) {
        const r = await runCli(['top', '--url', router.url, '--url', draining.url, '--once', '--source', source]);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(3);
        expect(replicaRow(r.stdout, router.url)).toMatch(/^\S+ +up +\d+ms ago$/);
        expect(replicaRow(r.stdout, draining.url)).toMatch(/^\S+ +draining +\d+ms ago$/);
        expect(r.stdout).not.toContain('DOWN');
      }
      const alone = await runCli(['top', '--url', draining.url, '--once']);
      expect(alone.code).toBe(3);
      // It still counts: its in-flight requests are being served.
      expect(rowOf(alone.stdout, fleet.urls[0]!)).toMatch(/\s9\/6\s/);
      const j = JSON.parse((await runCli(['top', '--url', router.url, '--url', draining.url, '--json'])).stdout) as Replicas;
      expect(j.replicas.map((x) => x.state)).toEqual(['up', 'draining']);
    } finally {
      endPause();
      await stopping;
    }
  });

  it("no replica answers: the first one's error in one line, exit 1", async () => {
    const [a, b] = [await closedPort(), await closedPort()];
    const r = await runCli(['top', '--url', `http://127.0.0.1:${a}`, '--url', `http://127.0.0.1:${b}`, '--once']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error RCTL_E_UNREACHABLE: cannot reach the router at http://127.0.0.1:${a}: connection refused\n`);
  });

  it('a replica down when the live feed starts: shown down, then up once it answers (--json --watch)', async () => {
    const port = await closedPort();
    const late = `http://127.0.0.1:${port}`;
    const { startCli } = await import('../helpers/cli.js');
    const cli = startCli(['top', '--url', router.url, '--url', late, '--json', '--watch', '--interval-ms', '200']);
    let started: Router | undefined;
    try {
      await cli.waitFor(/\}\n/, 10_000);
      const first = JSON.parse(cli.stdout().split('\n')[0]!) as Replicas & { workers: unknown[] };
      expect(first.replicas.map((x) => [x.state, x.last_answer_ms === null])).toEqual([
        ['up', false],
        ['down', true],
      ]);
      expect(first.workers).toHaveLength(3);
      started = await startTestRouter(fleet.urls, { workerQueueLimit: 6, port });
      await cli.waitFor(new RegExp(`"url":"${late.replace(/[.:/]/g, '\\$&')}"[^}]*"state":"up"`), 15_000);
      cli.child.kill('SIGINT');
      expect((await cli.exited(5000)).code).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      await started?.close();
    }
  }, 30_000);
});

describe('routerctl top loads Ink only for the live console', () => {
  it('--help, --once and --json reach no module of Ink or the console statically', () => {
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      // Static imports only: `import ... from '...'` at the start of a line.
      for (const m of text.matchAll(/^import\s[^;]*?from\s+'([^']+)';/gms)) {
        const spec = m[1]!;
        expect(spec).not.toBe('ink');
        expect(spec).not.toBe('react');
        if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec));
      }
    };
    visit(path.join(root, 'dist/commands/top.js'));
    visit(path.join(root, 'dist/src/top/run-top.js'));
    expect([...seen].some((f) => f.includes(`${path.sep}tui${path.sep}`))).toBe(false);
  });
});

describe('routerctl top --engines (no router)', () => {
  let sglang: SimFleet;
  let vllm: SimFleet;
  beforeAll(async () => {
    assertBuilt();
    sglang = await startSimFleet({ workers: 2, speedup: 20, flavor: 'sglang', dpSize: 2 });
    vllm = await startSimFleet({ workers: 1, speedup: 20, flavor: 'vllm', seed: 9 });
    await put(`${sglang.urls[0]}/sim/load`, { num_waiting_reqs: 7 });
    await put(`${vllm.urls[0]}/sim/load`, { num_waiting_reqs: 3 });
  });
  afterAll(async () => {
    await sglang?.close();
    await vllm?.close();
  });

  it('--json shows each engine of both flavours with its queue summed over ranks, and says what it cannot show', async () => {
    const r = await runCli(['top', '--engines', ...sglang.urls, ...vllm.urls, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as {
      source: string;
      workers: Array<{ url: string; waiting: number; running: number; gated: unknown }>;
      cannot_show: string[];
      decisions: unknown;
    };
    expect(j.source).toBe('engine');
    expect(j.workers.map((w) => [w.url, w.waiting])).toEqual([
      [sglang.urls[0], 7],
      [vllm.urls[0], 3],
      [sglang.urls[1], 0],
    ]);
    expect(j.workers[0]!.gated).toBeNull();
    expect(j.decisions).toBeNull();
    expect(j.cannot_show).toEqual(expect.arrayContaining(['routing decisions', 'queue limit', 'gate']));
  });

  it('--once draws the engines as a table, with no per-replica column', async () => {
    const r = await runCli(['top', '--engines', ...sglang.urls, ...vllm.urls, '--once']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("engines' load endpoints (no router)");
    expect(r.stdout).not.toMatch(/PER-REPL/);
    expect(r.stdout).toMatch(new RegExp(`${sglang.urls[0]!.replace(/^http:\/\//, '').replace(/[.:]/g, '\\$&')}\\s+7\\b`));
  });

  it('an engine that answers no load endpoint is one line and exit 1', async () => {
    const r = await runCli(['top', '--engines', 'http://127.0.0.1:1', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')[0]).toMatch(/^error RCTL_E_UNREACHABLE: engine http:\/\/127\.0\.0\.1:1: /);
  });
});

describe('routerctl top --json --watch and --record', () => {
  let fleet: SimFleet;
  let router: Router;
  beforeAll(async () => {
    assertBuilt();
    fleet = await startSimFleet({ workers: 2, speedup: 20 });
    router = await startTestRouter(fleet.urls, { workerQueueLimit: 6, loadPollIntervalMs: 100 });
  });
  afterAll(async () => {
    await router?.close();
    await fleet?.close();
  });

  it('streams one JSON line per update, and records every router update, until stopped', async () => {
    const { mkdtempSync, readFileSync: read, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-record-'));
    const file = path.join(dir, 'incident.ndjson');
    try {
      const { startCli } = await import('../helpers/cli.js');
      const cli = startCli(['top', '--url', router.url, '--json', '--watch', '--interval-ms', '200', '--record', file]);
      await cli.waitFor(/(\{.*\}\n){3}/s, 10_000);
      cli.child.kill('SIGINT');
      expect((await cli.exited(5000)).code).toBe(0);
      const lines = cli
        .stdout()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { workers: unknown[] });
      expect(lines.length).toBeGreaterThanOrEqual(3);
      expect(lines.every((l) => l.workers.length === 2)).toBe(true);
      const recorded = read(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { at: number; replica: string; source: string; live: boolean; snapshot: { workers: unknown[] } });
      expect(recorded.length).toBeGreaterThanOrEqual(2);
      expect(recorded[0]).toMatchObject({ replica: router.url, source: 'admin', live: true });
      expect(recorded[0]!.snapshot.workers).toHaveLength(2);
      // Played back: the state at the end of the recording, and a damaged line named, not hidden.
      const { appendFileSync } = await import('node:fs');
      appendFileSync(file, 'not json\n');
      const replayed = await runCli(['top', '--replay', file, '--json']);
      expect(replayed.code).toBe(0);
      expect((JSON.parse(replayed.stdout) as { workers: unknown[] }).workers).toHaveLength(2);
      expect(replayed.stderr).toMatch(
        new RegExp(`1 line of .* are not recorded updates and were left out \\(line ${recorded.length + 1}\\)`),
      );
      const once = await runCli(['top', '--replay', file, '--once']);
      expect(once.code).toBe(0);
      expect(once.stdout).toContain('source admin API');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [['--watch'], /--watch streams JSON lines: give it with --json/],
    [['--once', '--record', 'x.ndjson'], /--record keeps a live session/],
    [['--json', '--watch', '--record', '/nonexistent-dir/x.ndjson'], /cannot write the --record file \/nonexistent-dir\/x\.ndjson: ENOENT/],
  ])('%j is one line and exit 2', async (args, message) => {
    const r = await runCli(['top', '--url', router.url, ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
