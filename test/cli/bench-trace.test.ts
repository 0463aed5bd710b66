import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

/** A virtual-clock run is CPU-bound: on a CI machine shared with real engines it may take several times its usual seconds. */
const runSlow = (args: string[]): ReturnType<typeof runCli> => runCli(args, { timeoutMs: 90_000 });

/**
 * `routerctl bench run|compare --trace --clock virtual` (docs/bench.md): a small trace in the
 * Mooncake format, made here (the published traces are not shipped), replayed by the
 * built binary.
 */
let dir = '';
let trace = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'routerctl-trace-'));
  trace = path.join(dir, 'trace.jsonl');
  // 200 requests over 8 shared prefixes of 3 blocks, each with 1-2 blocks of its own.
  let s = 7;
  const rnd = (): number => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const lines: string[] = [];
  let t = 0;
  let own = 100_000;
  for (let i = 0; i < 200; i++) {
    t += -Math.log(1 - rnd()) * 100;
    const g = Math.floor(rnd() ** 2 * 8);
    const ids = [g * 10, g * 10 + 1, g * 10 + 2, ...Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => own++)];
    lines.push(
      JSON.stringify({
        timestamp: Math.round(t),
        input_length: (ids.length - 1) * 512 + 1 + Math.floor(rnd() * 511),
        output_length: 16 + Math.floor(rnd() * 48),
        hash_ids: ids,
      }),
    );
  }
  await writeFile(trace, `${lines.join('\n')}\n`);
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('routerctl bench run|compare --trace --clock virtual', () => {
  it('two runs with the same seed print byte-identical JSON; round robin reuses less than cache_aware', async () => {
    const args = [
      'bench',
      'compare',
      '--trace',
      trace,
      '--clock',
      'virtual',
      '--policy round_robin',
      '',
      '--sweep',
      'worker-queue-limit=4',
      '--json',
    ];
    const a = await runSlow(args);
    const b = await runSlow(args);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const report = JSON.parse(a.stdout) as {
      trace: { requests: number; digest: string };
      runs: Array<{ label: string; finished: number; cached_token_ratio: number; decisions: Record<string, number> }>;
    };
    expect(report.trace.requests).toBe(200);
    expect(report.trace.digest).toMatch(/^[0-9a-f]{16}$/);
    expect(report.runs.map((r) => r.label)).toEqual(['--policy round_robin', '(defaults)', '--worker-queue-limit 4']);
    for (const r of report.runs) expect(r.finished).toBe(200);
    expect(report.runs[1]!.cached_token_ratio).toBeGreaterThan(report.runs[0]!.cached_token_ratio);
    expect(report.runs[1]!.decisions.cache_hit).toBeGreaterThan(150);
    // Another seed is another run of the engines (output lengths are the trace's, timings the engines').
    const c = await runSlow([...args, '--seed', '8']);
    expect(JSON.parse(c.stdout).seed).toBe(8);
  }, 240_000);

  it('the text report has one row per configuration and names the digest', async () => {
    const r = await runSlow(['bench', 'run', '--trace', trace, '--clock', 'virtual', '--trace-limit', '50']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^trace trace\.jsonl: 50 requests \(digest [0-9a-f]{16}\), blocks of 512 tokens; 8 simulated engines; virtual clock\n/,
    );
    expect(r.stdout).toMatch(/\| A \| \(defaults\) \| [\d.]+% \|/);
    // The TTFT chart under the table, plain under NO_COLOR.
    expect(r.stdout).toMatch(/\nTTFT by configuration \(simulated ms\) {3}lines: p99 {3}p90 {3}p50\n/);
    expect(r.stdout).not.toMatch(/\x1b\[/);
  }, 240_000);

  it.each([
    [['--clock', 'virtual'], /^error RCTL_E_USAGE: --clock virtual replays a trace: give it with --trace FILE \(or --workload gsp\)/],
    [['--trace', 'T', '--workload', 'gsp'], /^error RCTL_E_USAGE: --trace and --workload gsp are two workloads: give one/],
    [['--workload', 'gsp', '--gsp', 'group-distribution=zipf'], /--gsp zipf-alpha goes with group-distribution=zipf, and zipf needs it/],
    [['--workload', 'gsp', '--url', 'http://127.0.0.1:9'], /--workload gsp runs simulated fleets of its own: it takes no --url/],
    [['--trace', 'T', '--clock', 'virtual', '--trace-window', '5..2'], /--trace-window takes START\.\.END seconds with END after START/],
  ])('%j is refused in one line', async (args, message) => {
    const r = await runSlow(['bench', 'run', ...args.map((a) => (a === 'T' ? trace : a))]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('a trace with a bad line stops before anything runs, naming the line', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    await writeFile(bad, `${JSON.stringify({ timestamp: 0, input_length: 10, output_length: 1, hash_ids: [1] })}\n{"timestamp": 5}\n`);
    const r = await runSlow(['bench', 'run', '--trace', bad, '--clock', 'virtual']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error RCTL_E_USAGE: 1 line of the trace cannot be replayed: .*bad\.jsonl:2: input_length is missing/);
  });

  it('--clock wall replays the same trace over HTTP to real processes, and lands near the virtual clock', async () => {
    // 40 requests over about 2 s, a fleet far from saturated.
    const small = path.join(dir, 'small.jsonl');
    const lines = (await readFile(trace, 'utf8')).trim().split('\n').slice(0, 40);
    await writeFile(small, lines.map((l, i) => JSON.stringify({ ...JSON.parse(l), timestamp: i * 50 })).join('\n') + '\n');
    const args = ['bench', 'compare', '--trace', small, '--json', '--sim-speedup', '1', ''];
    const wall = await runSlow([...args, '--clock', 'wall']);
    expect(wall.code).toBe(0);
    const virtual = await runSlow([...args, '--clock', 'virtual']);
    type Report = {
      clock: string;
      trace: { digest: string };
      runs: Array<{ finished: number; decisions: Record<string, number>; cached_token_ratio: number }>;
    };
    const w = JSON.parse(wall.stdout) as Report;
    const v = JSON.parse(virtual.stdout) as Report;
    expect(w.clock).toBe('wall');
    expect(w.trace.digest).toBe(v.trace.digest);
    expect(w.runs[0]!.finished).toBe(40);
    // The router's own counters over the run: one decision per request.
    expect(Object.values(w.runs[0]!.decisions).reduce((a, b) => a + b, 0)).toBe(40);
    // Within 5 points of the virtual clock's mix (2 of 40): real time may reorder a close call.
    expect(Math.abs(w.runs[0]!.decisions.cache_hit! - v.runs[0]!.decisions.cache_hit!)).toBeLessThanOrEqual(2);
    expect(Math.abs(w.runs[0]!.cached_token_ratio - v.runs[0]!.cached_token_ratio)).toBeLessThan(0.05);
  }, 240_000);

  it("--workload gsp replays SGLang's shared-prefix dataset, multi-turn included, byte-identically for a seed", async () => {
    const args = [
      'bench',
      'compare',
      '--workload',
      'gsp',
      '--gsp',
      'num-groups=4,prompts-per-group=4,num-turns=2',
      '--rate',
      '8',
      '--clock',
      'virtual',
      '--policy round_robin',
      '',
      '--json',
    ];
    const a = await runSlow(args);
    const b = await runSlow(args);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const report = JSON.parse(a.stdout) as {
      trace: { file: string; requests: number; block_size: number };
      runs: Array<{ finished: number; cached_token_ratio: number }>;
    };
    expect(report.trace).toMatchObject({ file: 'gsp', requests: 32, block_size: 16 });
    for (const r of report.runs) expect(r.finished).toBe(32);
    // The second turn resends the first with its answer: cache-aware routing finds it.
    expect(report.runs[1]!.cached_token_ratio).toBeGreaterThan(report.runs[0]!.cached_token_ratio);
  }, 240_000);

  it('bench compare --recommend picks on trace windows 1-3, checks on 4-6, and says what it found in plain words', async () => {
    const r = await runSlow([
      'bench',
      'compare',
      '--trace',
      trace,
      '--clock',
      'virtual',
      '--recommend',
      '--policy round_robin',
      '',
      '--sweep',
      'worker-queue-limit=4',
    ]);
    expect(r.code).toBe(0);
    // Before the run, how many requests the engines will refuse for length.
    expect(r.stderr).toBe('bench: 0 of 200 requests exceed the context length of 131072 tokens\n');
    expect(r.stdout).toMatch(/^ceiling \(an infinite prefix cache\): [\d.]+% of prompt tokens cached/m);
    expect(r.stdout).toMatch(/^recommend: picked on trace windows 1–3 \(0–\d+ s, \d+ requests\), checked on trace windows 4–6/m);
    expect(r.stdout).toMatch(/^\| C \| --worker-queue-limit 4 \| on \| [\d.]+%/m);
    expect(r.stdout).toMatch(/^best: [ABC] \(/m);
    expect(r.stdout).toMatch(/^gate: (keep --worker-queue-limit off|set it as C)/m);
    expect(r.stdout).toMatch(/^held-out check: /m);
    const json = await runSlow([
      'bench',
      'compare',
      '--trace',
      trace,
      '--clock',
      'virtual',
      '--recommend',
      '--policy round_robin',
      '',
      '--json',
    ]);
    const report = JSON.parse(json.stdout) as {
      recommend: { split: string; samples: Array<{ role: string; requests: number }>; verdict: string };
    };
    expect(report.recommend.split).toBe('trace_windows');
    expect(report.recommend.samples.map((s) => s.role)).toEqual(['pick', 'pick', 'pick', 'check', 'check', 'check']);
    expect(report.recommend.samples.reduce((a, s) => a + s.requests, 0)).toBe(200);
    expect(['holds', 'too_short_to_tell']).toContain(report.recommend.verdict);
  }, 240_000);

  it.each([
    [
      ['--trace', 'T', '--recommend', '', '--policy round_robin'],
      /--recommend replays six samples per configuration on the virtual clock: add --clock virtual/,
    ],
    [['--trace', 'T', '--clock', 'virtual', '--recommend', ''], /--recommend picks among configurations: give at least two/],
    [['--recommend', '', '--policy round_robin'], /--recommend ranks configurations on a replay: give --trace FILE \(or --workload gsp\)/],
  ])('bench compare %j is refused in one line', async (args, message) => {
    const r = await runSlow(['bench', 'compare', ...args.map((a) => (a === 'T' ? trace : a))]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
