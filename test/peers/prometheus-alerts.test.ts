import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually, put, rawRequest } from '../helpers/http.js';
import { freePort } from '../helpers/peer-router.js';
import { describeWithPeers } from '../helpers/peers.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * The alert rules and the dashboard under deploy/ against a real Prometheus (Debian's
 * 2.42 with promtool, which .ci/run installs) scraping a live router over a simulated
 * fleet (docs/metrics-and-admin.md §Alerts and dashboard). promtool checks the rules
 * and runs their unit tests (the `for` durations, on a synthetic timeline). Then the
 * test drives each condition for real: pinned queues (all_queued), an engine answering
 * 500 (its breaker opens), silenced load endpoints (stale samples, the gate inert) and
 * a fleet that goes away (no worker in the pool); it sees each alert fire, with the
 * rules' `for` set to 0 so that it need not wait minutes. Every dashboard query is run
 * with its template variables substituted, after at least two scrapes, and returns
 * the value the driven state implies.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RULES = path.join(ROOT, 'deploy', 'prometheus', 'alerts.yml');
const DASHBOARD = path.join(ROOT, 'deploy', 'grafana', 'routerctl.json');
const find = (name: string): string | undefined =>
  [`/usr/bin/${name}`, `/usr/local/bin/${name}`].find((p) => spawnSync('test', ['-x', p]).status === 0);
const PROMETHEUS = find('prometheus');
const PROMTOOL = find('promtool');

interface Panel {
  title: string;
  targets: Array<{ expr: string }>;
}
const panels = (JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] }).panels;

let dir = '';
let prom: ChildProcess | undefined;
let promUrl = '';
let fleet: SimFleet | undefined;
let router: Router | undefined;
let target = '';

async function startAll(): Promise<void> {
  dir = mkdtempSync(path.join(tmpdir(), 'routerctl-prom-'));
  fleet = await startSimFleet({ workers: 3, speedup: 50 });
  router = await startTestRouter(fleet.urls, { workerQueueLimit: 2, cbThreshold: 3, cbCoolDownSecs: 300 });
  target = new URL(router.url).host;
  // The rules as shipped, with every `for` at 0: the unit tests check the durations.
  writeFileSync(path.join(dir, 'alerts.yml'), readFileSync(RULES, 'utf8').replace(/^(\s+)for: \S+$/gm, '$1for: 0s'));
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files:',
      '  - alerts.yml',
      'scrape_configs:',
      '  - job_name: routerctl',
      '    static_configs:',
      `      - targets: ['${target}']`,
    ].join('\n'),
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prom = spawn(
    PROMETHEUS!,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
  await eventually(async () => (await rawRequest(`${promUrl}/-/ready`).catch(() => ({ status: 0 }))).status === 200, 20_000, 100);
}

async function stopAll(): Promise<void> {
  if (prom && prom.exitCode === null) {
    const gone = new Promise((r) => prom!.once('exit', r));
    prom.kill('SIGTERM');
    await gone;
  }
  await router?.close();
  await fleet?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

async function query(expr: string): Promise<Array<{ metric: Record<string, string>; value: number }>> {
  const res = await rawRequest(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = JSON.parse(res.text) as {
    status: string;
    error?: string;
    data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}

/** A panel's query as Grafana sends it: the router as $instance, a rate window of five scrapes. */
async function panel(title: string): Promise<Array<{ metric: Record<string, string>; value: number }>> {
  const p = panels.find((x) => x.title === title);
  if (!p) throw new Error(`no panel ${title}`);
  const expr = p.targets[0]!.expr.replaceAll('$instance', target.replaceAll('.', '\\\\.')).replaceAll('$__rate_interval', '5s');
  return query(expr);
}

async function firing(alert: string, labels: Record<string, string> = {}): Promise<void> {
  await eventually(
    async () => {
      const res = JSON.parse((await rawRequest(`${promUrl}/api/v1/alerts`)).text) as {
        data: { alerts: Array<{ labels: Record<string, string>; state: string }> };
      };
      return res.data.alerts.some(
        (a) => a.labels.alertname === alert && a.state === 'firing' && Object.entries(labels).every(([k, v]) => a.labels[k] === v),
      );
    },
    40_000,
    250,
  );
}

/**
 * Chats one after another, until stopped: rates need traffic in every window. `shared`:
 * one prompt, so that its owner is a cache candidate (the gate's decisions); otherwise
 * each prompt is new, so that misses spread over every worker.
 */
function traffic(shared: boolean): () => Promise<void> {
  let stop = false;
  let n = 0;
  const loop = (async () => {
    while (!stop) {
      // ~1,500 estimated tokens: over the 1,024-token affinity minimum, so decisions are the cache-aware ones.
      const content = `${shared ? 'shared' : `fresh ${n++} ${Math.random()}`} ${'Shared operations runbook. '.repeat(230)}`;
      await rawRequest(`${router!.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ messages: [{ role: 'user', content }], max_tokens: 2 }),
      }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 30));
    }
  })();
  return async () => {
    stop = true;
    await loop;
  };
}

const byLabel = (rows: Array<{ metric: Record<string, string>; value: number }>, label: string) =>
  Object.fromEntries(rows.map((r) => [r.metric[label] ?? '', r.value]));

describeWithPeers(['prometheus'], 'deploy/prometheus and deploy/grafana against a real Prometheus', () => {
  beforeAll(startAll, 40_000);
  afterAll(stopAll);

  it('promtool checks the rules and passes their unit tests', () => {
    const check = spawnSync(PROMTOOL!, ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/SUCCESS: 7 rules found/);
    const unit = spawnSync(PROMTOOL!, ['test', 'rules', 'alerts.test.yml'], { cwd: path.dirname(RULES), encoding: 'utf8' });
    expect(unit.status, unit.stdout + unit.stderr).toBe(0);
  });

  it('each driven condition fires its alert, and every panel reads the driven state', async () => {
    const [e0, e1, e2] = fleet!.urls as [string, string, string];
    expect(panels.length).toBeGreaterThanOrEqual(12);
    let stopTraffic = traffic(true);
    try {
      // Every engine at or over the limit of 2: every decision is all_queued.
      for (const u of fleet!.urls) expect((await put(`${u}/sim/load`, { num_waiting_reqs: 3 })).status).toBe(200);
      await firing('RouterctlAllQueued');
      expect(byLabel(await panel('Engine waiting queues'), 'worker')).toEqual({ [e0]: 3, [e1]: 3, [e2]: 3 });
      expect((await panel('all_queued share'))[0]!.value).toBeGreaterThan(0.9);
      expect(byLabel(await panel('Decisions per second'), 'decision').all_queued).toBeGreaterThan(0);
      expect(byLabel(await panel('Requests per second'), 'route')['/v1/chat/completions']).toBeGreaterThan(0);
      expect((await panel('Workers in the pool'))[0]!.value).toBe(3);
      expect((await panel('Queue gate inert'))[0]!.value).toBe(0);
      expect(Object.values(byLabel(await panel('Circuit breakers (1 open, 2 half open)'), 'worker_url'))).toEqual([0, 0, 0]);
      // All queued is no diversion: the owner is gated, but affinity is kept, and nothing is given up.
      expect(Object.values(byLabel(await panel('Gate rejections per second'), 'worker')).some((v) => v > 0)).toBe(true);
      expect((await panel('Partial diversions per second'))[0]!.value).toBe(0);
      expect((await panel('Diverted overlap p90 (blocks)')).every((r) => Number.isNaN(r.value))).toBe(true);
      expect(Object.keys(byLabel(await panel('In flight per worker'), 'worker_url')).sort()).toEqual([e0, e1, e2].sort());
      // Nothing pushes KV events and nothing streams here: those panels have nothing to say.
      expect(await panel('KV event lag')).toEqual([]);
      expect(await panel('KV event gaps lost (10 min)')).toEqual([]);
      expect(await panel('TTFT p99')).toEqual([]);
      for (const u of fleet!.urls) await put(`${u}/sim/load`, { num_waiting_reqs: null });
      await stopTraffic();
      stopTraffic = traffic(false);

      // One engine answers 500 to everything: after three failures its breaker opens.
      expect((await put(`${e0}/sim/config`, { failure_rate: 1 })).status).toBe(200);
      await firing('RouterctlBreakerOpen', { worker_url: e0 });
      expect(byLabel(await panel('Circuit breakers (1 open, 2 half open)'), 'worker_url')[e0]).toBe(1);
      expect((await panel('Workers in the pool'))[0]!.value).toBe(2);

      // The others stop reporting load: their samples go stale, and with no fresh sample in the pool the gate is inert.
      for (const u of [e1, e2]) expect((await put(`${u}/sim/config`, { load_reporting: false })).status).toBe(200);
      await firing('RouterctlQueueGateInert');
      expect((await panel('Queue gate inert'))[0]!.value).toBe(1);
      await firing('RouterctlLoadSampleStale', { worker: e1 });
      expect(byLabel(await panel('Load sample age'), 'worker')[e1]).toBeGreaterThan(15);
      expect(byLabel(await panel('Load poll failures per second'), 'worker')[e1]).toBeGreaterThan(0);
    } finally {
      await stopTraffic();
    }

    // The fleet goes away: nothing answers its load polls, nobody is left in the pool.
    await fleet!.close();
    fleet = undefined;
    await firing('RouterctlNoWorkers');
    expect((await panel('Workers in the pool'))[0]!.value).toBe(0);
  }, 120_000);
});
