/**
 * Does `bench compare --recommend`'s held-out check agree with its pick? On the
 * 2,000-request conversation trace of test/bench/recommend-held-out.test.ts (4
 * engines of 1,024 KV blocks, 8 running), find the rate at which plain cache_aware's
 * goodput (TTFT ≤ 2 s) first drops below 90 % (steps of 4 req/s from 32, then the
 * three whole rates before the first one below), then run --recommend at 80 %, 95 %
 * and 110 % of it over round robin, cache_aware and the gate at 2, 4 and 8. Each
 * configuration replays the whole trace once; its six windows are slices of that
 * replay. Runs the built routerctl, as a user would.
 *
 *   npm run perf -- recommend [--requests 2000]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { conversationTrace, SMALL_CONVERSATIONS, toMooncakeJsonl } from '../src/workload/index.js';
import { ROUTERCTL_BIN } from './support/processes.js';
import { benchArg } from './support/args.js';
import { writeResult } from './support/results.js';

interface Score {
  goodput: number;
  goodput_min: number;
  goodput_max: number;
  ttft_p99_ms: number | null;
  rank: number;
}

interface Recommend {
  configurations: Array<{ letter: string; label: string; pick: Score; check: Score }>;
  pick: { letter: string; label: string; lead: { over: string; goodput_points: number; ttft_p99_ratio: number | null; clear: boolean } };
  gate: { advice: string | null };
  check: { best: string; pick_rank: number; agrees: boolean };
  verdict: string;
}

const requests = Number(benchArg('requests', '2000'));
const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-recommend-'));
const FLEET = ['--sim-workers', '4', '--sim-kv-blocks', '1024', '--sim-max-running', '8', '--trace-block-size', '64', '--clock', 'virtual'];

function traceFile(rate: number): string {
  const file = path.join(dir, `conversations-${rate}.jsonl`);
  const trace = conversationTrace({
    requests,
    rate,
    ...SMALL_CONVERSATIONS,
    seed: 1,
  });
  writeFileSync(file, toMooncakeJsonl(trace));
  return file;
}

function bench(args: string[]): unknown {
  const r = spawnSync(process.execPath, [ROUTERCTL_BIN, 'bench', ...args, ...FLEET, '--json'], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`routerctl bench exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const goodput = (rate: number): number =>
  (bench(['run', '--trace', traceFile(rate)]) as { runs: Array<{ goodput: number }> }).runs[0]!.goodput;

try {
  const t0 = performance.now();
  const swept: Array<[number, number]> = [];
  const probe = (rate: number): number => {
    const g = goodput(rate);
    swept.push([rate, g]);
    return g;
  };
  let high = 32;
  while (probe(high) >= 0.9) high += 4;
  let rate90 = high;
  for (let rate = high - 3; rate < high; rate++)
    if (probe(rate) < 0.9) {
      rate90 = rate;
      break;
    }
  console.log(
    `node ${process.version}; ${requests} requests; cache_aware goodput by rate: ${swept.map(([r, g]) => `${r}: ${(100 * g).toFixed(1)} %`).join(', ')}`,
  );
  console.log(`first below 90 %: ${rate90} req/s`);
  console.log('');
  console.log(
    '| load | req/s | pick (windows 1–3) | lead over next | gate | held-out best | pick rank held out | goodput range, windows 1–3 → 4–6 | verdict |',
  );
  console.log('|---:|---:|---|---|---|---|---:|---|---|');
  const figures: Record<string, number | string | boolean | null> = { requests, rate_90_rps: rate90 };
  let agreed = 0;
  for (const load of [0.8, 0.95, 1.1]) {
    const rate = Math.round(rate90 * load * 10) / 10;
    const r = (
      bench(['compare', '--trace', traceFile(rate), '--recommend', '--policy round_robin', '--sweep', 'worker-queue-limit=off,2,4,8']) as {
        recommend: Recommend;
      }
    ).recommend;
    const label = (letter: string): string => r.configurations.find((c) => c.letter === letter)!.label;
    const l = r.pick.lead;
    // Over every configuration: the least and greatest per-window goodput of each half.
    const range = (half: 'pick' | 'check'): string => {
      const lo = Math.min(...r.configurations.map((c) => c[half].goodput_min));
      const hi = Math.max(...r.configurations.map((c) => c[half].goodput_max));
      return `${(100 * lo).toFixed(1)}–${(100 * hi).toFixed(1)} %`;
    };
    console.log(
      `| ${Math.round(load * 100)} % | ${rate} | ${r.pick.label} | ${l.goodput_points >= 0 ? '+' : ''}${l.goodput_points} points, p99 ${l.ttft_p99_ratio ?? '–'}× ${label(l.over)}${l.clear ? '' : ' (within spread)'} | ${r.gate.advice ?? '–'} | ${label(r.check.best)} | ${r.check.pick_rank} | ${range('pick')} → ${range('check')} | ${r.verdict} |`,
    );
    const plain = r.configurations.find((c) => c.label === '(defaults)')!;
    const key = `load_${Math.round(load * 100)}`;
    Object.assign(figures, {
      [`${key}_rate_rps`]: rate,
      [`${key}_pick`]: r.pick.label,
      [`${key}_held_out_best`]: label(r.check.best),
      [`${key}_pick_rank_held_out`]: r.check.pick_rank,
      [`${key}_cache_aware_goodput_pick`]: plain.pick.goodput,
      [`${key}_cache_aware_goodput_check`]: plain.check.goodput,
      [`${key}_agrees`]: r.check.agrees,
      [`${key}_gate_advice`]: r.gate.advice,
    });
    if (r.check.agrees) agreed++;
  }
  const wall = (performance.now() - t0) / 1000;
  figures.loads_agreeing = agreed;
  figures.wall_s = Number(wall.toFixed(1));
  console.log('');
  console.log(`${agreed} of 3 loads: the held-out check agrees with the pick; ${wall.toFixed(1)} s in all`);
  writeResult('recommend', {
    figures,
    goals: [{ claim: 'loads at which the held-out check agrees with the pick', figure: agreed, goal: '3 of 3', met: agreed === 3 }],
    bottleneck: 'one core running the simulated engines (virtual clock)',
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
