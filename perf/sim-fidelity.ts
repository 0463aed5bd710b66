/**
 * `npm run perf -- sim-fidelity [--seconds S] [--rate R]`: what routerctl's simulator
 * gets wrong, measured beside an engine it did not write
 * (docs/simulator.md §Beside llm-d-inference-sim). Three llm-d-inference-sim engines (the peers tier's, pinned),
 * then three `routerctl sim --flavor vllm` engines configured to match them (same
 * running cap, the same queue bound, the same block size and KV pool, step costs set
 * from each other's latency parameters), each fleet behind the same routerctl serve
 * (cache_aware, gate at 4), driven by the same `bench run` workload. Beside the run's
 * figures, three probes on one engine of each fleet, the things the gate reads:
 *
 * - metrics lag: a burst of 12 requests sent at once, and how long until the engine's
 *   own /metrics counts all of them (running plus waiting), polled every 2 ms;
 * - when refusals start: 40 long requests sent at once, which of them are refused and
 *   with what status;
 * - queue growth: the router's view of each worker's waiting queue every 100 ms of the
 *   run (its peak, and the share of samples at or past the gate's limit).
 */
import { spawn } from 'node:child_process';
import { parsePrometheusText, sumSamples } from '../src/prometheus/index.js';
import { benchArg } from './support/args.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { startLlmdFleet } from './support/llmd-fleet.js';
import { writeResult } from './support/results.js';
import type { Figures } from './support/results.js';

const SECONDS = Number(benchArg('seconds', '40'));
const RATE = Number(benchArg('rate', '6'));
const LIMIT = 4;
/** Both fleets: 8 running per engine, 16 more may wait (llm-d: waiting; vLLM: unfinished = 24). */
const RUNNING = 8;
const WAITING = 16;
const KV_BLOCKS = 8192;
/** routerctl sim's step model at --speedup 0.5: β0 11.5 ms a step, β1 34.5 µs a prefill token, β2 12 µs a decode token. */
const SPEEDUP = 0.5;

interface Arm {
  readonly name: 'llm-d-inference-sim' | 'routerctl-sim';
  readonly urls: string[];
  stop(): Promise<void>;
}

async function llmdFleet(): Promise<Arm> {
  // Its per-request model, set from routerctl sim's step costs at the same speed-up.
  const fleet = await startLlmdFleet({
    engines: 3,
    maxNumSeqs: RUNNING,
    maxWaiting: WAITING,
    kvBlocks: KV_BLOCKS,
    prefillOverhead: '11.5ms',
    prefillPerToken: '34.5us',
    interToken: '11.6ms',
  });
  return { name: 'llm-d-inference-sim', urls: fleet.urls, stop: fleet.stop };
}

async function routerctlFleet(): Promise<Arm> {
  const { out, child } = await startProcess(
    [
      ROUTERCTL_BIN,
      ...['sim', '-n', '3', '--flavor', 'vllm', '--port-base', '0', '--json', '--model', 'tiny', '--context-length', '32768'],
      ...['--max-running', String(RUNNING), '--max-num-queued-reqs', String(RUNNING + WAITING)],
      ...['--kv-blocks', String(KV_BLOCKS), '--block-size', '16', '--speedup', String(SPEEDUP)],
    ],
    /^(\{.*\})$/m,
  );
  const urls = (JSON.parse(out) as { urls: string[] }).urls;
  return { name: 'routerctl-sim', urls, stop: () => stopProcess(child) };
}

async function engineCount(url: string): Promise<number> {
  const m = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
  return (sumSamples(m.get('vllm:num_requests_running')) ?? 0) + (sumSamples(m.get('vllm:num_requests_waiting')) ?? 0);
}

const longChat = (i: number, tokens: number): string =>
  JSON.stringify({
    model: 'tiny',
    messages: [{ role: 'user', content: `probe ${i} ${Date.now()}` }],
    max_tokens: tokens,
    ignore_eos: true,
  });

/** How long until /metrics counts a burst of 12 requests sent at once. */
async function metricsLag(url: string): Promise<number> {
  const aborts = new AbortController();
  const sent = performance.now();
  const reqs = Array.from({ length: 12 }, (_, i) =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: longChat(i, 400),
      signal: aborts.signal,
    }).catch(() => undefined),
  );
  let lag = Number.NaN;
  while (performance.now() - sent < 5000) {
    if ((await engineCount(url)) >= 12) {
      lag = performance.now() - sent;
      break;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  aborts.abort();
  await Promise.all(reqs);
  await drained(url);
  return Math.round(lag * 10) / 10;
}

/** 40 long requests at once: the index of the first refused one, and the statuses of the refused. */
async function refusals(url: string): Promise<{ first: number | null; statuses: Record<string, number> }> {
  const aborts = new AbortController();
  const statuses: Record<string, number> = {};
  let first: number | null = null;
  const reqs: Array<Promise<void>> = [];
  for (let i = 0; i < 40; i++) {
    reqs.push(
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: longChat(i, 2000),
        signal: aborts.signal,
      })
        .then(async (res) => {
          if (res.status !== 200) {
            statuses[res.status] = (statuses[res.status] ?? 0) + 1;
            if (first === null || i < first) first = i;
          }
          await res.body?.cancel();
        })
        .catch(() => undefined),
    );
    // In order: each one reaches the engine before the next is sent.
    await new Promise((r) => setTimeout(r, 15));
  }
  await new Promise((r) => setTimeout(r, 500));
  aborts.abort();
  await Promise.all(reqs);
  await drained(url);
  return { first, statuses };
}

async function drained(url: string): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until && (await engineCount(url)) > 0) await new Promise((r) => setTimeout(r, 100));
}

async function run(arm: Arm): Promise<Figures> {
  const lag = await metricsLag(arm.urls[0]!);
  const refused = await refusals(arm.urls[0]!);
  const { out, child } = await startProcess(
    [
      ROUTERCTL_BIN,
      ...['serve', '--no-tui', '--port', '0', '--worker-urls', ...arm.urls, '--worker-queue-limit', String(LIMIT)],
      ...['--load-poll-interval-ms', '100'],
    ],
    /^(http:\/\/127\.0\.0\.1:\d+)$/m,
  );
  const router = out;
  const samples: number[][] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        const s = (await (await fetch(`${router}/admin/state`)).json()) as { workers: Array<{ waiting: number | null }> };
        samples.push(s.workers.map((w) => w.waiting ?? 0));
      } catch {
        // between runs
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const bench = await new Promise<string>((resolve, reject) => {
    const c = spawn(
      process.execPath,
      [
        ROUTERCTL_BIN,
        'bench',
        'run',
        '--url',
        router,
        '--rate',
        String(RATE),
        '--duration',
        `${SECONDS}s`,
        '--grace',
        '20s',
        '--json',
        '--seed',
        '7',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let text = '';
    c.stdout.on('data', (b: Buffer) => (text += b.toString()));
    c.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`bench run exited ${code}`))));
  });
  sampling = false;
  await sampler;
  await stopProcess(child);
  const report = JSON.parse(bench) as {
    summary: Record<string, Record<string, number | Record<string, number>>>;
    router: { decisions?: Record<string, number> } | null;
  };
  const summary = report.summary;
  const decisions = report.router?.decisions ?? {};
  const flat = samples.flat();
  const ttft = summary.ttft_ms as Record<string, number>;
  const errors = summary.errors as { total: number; by_status: Record<string, number> };
  const cache = summary.cache as Record<string, number>;
  const requests = summary.requests as Record<string, number>;
  const p = `${arm.name === 'routerctl-sim' ? 'sim' : 'llmd'}_`;
  return {
    [`${p}metrics_lag_burst12_ms`]: lag,
    [`${p}first_refused_of_40`]: refused.first,
    [`${p}refused_statuses`]: JSON.stringify(refused.statuses),
    [`${p}requests_ok`]: requests.ok ?? null,
    [`${p}errors`]: errors.total,
    [`${p}errors_by_status`]: JSON.stringify(errors.by_status),
    [`${p}ttft_p50_ms`]: ttft.p50 ?? null,
    [`${p}ttft_p99_ms`]: ttft.p99 ?? null,
    [`${p}cached_ratio`]: cache.ratio ?? null,
    [`${p}decisions`]: JSON.stringify(decisions),
    [`${p}waiting_peak`]: flat.length > 0 ? Math.max(...flat) : null,
    [`${p}waiting_at_limit_share`]:
      flat.length > 0 ? Math.round((flat.filter((w) => w >= LIMIT).length / flat.length) * 1000) / 1000 : null,
  };
}

const figures: Figures = { seconds: SECONDS, rate_per_s: RATE, worker_queue_limit: LIMIT };
for (const make of [llmdFleet, routerctlFleet]) {
  const arm = await make();
  try {
    Object.assign(figures, await run(arm));
  } finally {
    await arm.stop();
  }
}
process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
writeResult('sim-fidelity', {
  figures,
  bottleneck:
    'the engines: both fleets run at their running caps (8 per engine) on a 2-core machine, the client and router well below a core',
});
