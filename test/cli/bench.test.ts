import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { startFakeOpenAi } from '../bench/fake-openai.js';
import type { FakeServer } from '../bench/fake-openai.js';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(mode: Parameters<typeof startFakeOpenAi>[0]): Promise<FakeServer> {
  const s = await startFakeOpenAi(mode);
  servers.push(s);
  return s;
}

/** Resolves true when nothing listens at the URL any more. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

interface UrlReport {
  mode: string;
  summary: {
    requests: { sent: number; ok: number; failed: number };
    errors: { total: number; by_status: Record<string, number>; by_cause: Record<string, number> };
    ttft_ms: { p50: number | null; p90: number | null; p99: number | null };
    cache: { ratio: number | null };
  };
  arrivals: { count: number; digest: string };
  router: unknown;
}

describe('routerctl bench run --url (built binary)', () => {
  it('against a router answering 503: counts the errors by status and cause, prints the summary, exits 1 within duration + grace', async () => {
    const server = await fake({ kind: 'status', status: 503, code: 'no_healthy_workers' });
    const t0 = Date.now();
    const r = await runCli(['bench', 'run', '--url', server.url, '--rate', '20', '--duration', '2s', '--grace', '1s', '--json'], {
      timeoutMs: 20_000,
    });
    const elapsed = Date.now() - t0;
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as UrlReport;
    expect(report.mode).toBe('url');
    expect(report.summary.requests.sent).toBeGreaterThan(5);
    expect(report.summary.requests.ok).toBe(0);
    expect(report.summary.errors.by_status).toEqual({ '503': report.summary.requests.sent });
    expect(report.summary.errors.by_cause).toEqual({ no_healthy_workers: report.summary.requests.sent });
    expect(report.summary.ttft_ms.p50).toBeNull();
    expect(report.router).toBeNull();
    // Node start-up and the model probe on top of 2 s + 1 s.
    expect(elapsed).toBeLessThan(2000 + 1000 + 6000);
  });

  it('against a router that stalls: cuts the stragglers at duration + grace and reports them', async () => {
    const server = await fake({ kind: 'stall' });
    const t0 = Date.now();
    const r = await runCli(['bench', 'run', '--url', server.url, '--rate', '10', '--duration', '2s', '--grace', '1s', '--json'], {
      timeoutMs: 20_000,
    });
    const elapsed = Date.now() - t0;
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as UrlReport;
    expect(report.summary.requests.sent).toBeGreaterThan(3);
    expect(report.summary.errors.by_status['0']).toBe(report.summary.requests.sent);
    expect(report.summary.errors.by_cause.cut_at_end).toBe(report.summary.requests.sent);
    expect(elapsed).toBeLessThan(2000 + 1000 + 6000);
  });

  it('prints the plain report against a working endpoint and exits 0', async () => {
    const server = await fake({ kind: 'stream', reply: 'a b c', cachedTokens: 40 });
    const r = await runCli(['bench', 'run', '--url', `${server.url}/`, '--rate', '20', '--duration', '1s'], { timeoutMs: 20_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/TTFT ms/);
    expect(r.stdout).toMatch(/ITL ms/);
    expect(r.stdout).toMatch(/latency ms/);
    expect(r.stdout).toMatch(/cached\s+40\.0% of prompt tokens/);
    expect(r.stdout).toMatch(/errors\s+none/);
    expect(r.stdout).not.toMatch(/\u001b\[/);
    // Not a terminal: no progress line on stderr.
    expect(r.stderr).toBe('');
    expect(server.bodies[0]!.model).toBe('fake-model');
  });

  it('reports a refused connection as errors with status 0', async () => {
    const server = await fake({ kind: 'stall' });
    const url = server.url;
    await servers.pop()!.close();
    const r = await runCli(['bench', 'run', '--url', url, '--rate', '10', '--duration', '1s', '--json'], { timeoutMs: 20_000 });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as UrlReport;
    expect(report.summary.errors.by_cause).toEqual({ ECONNREFUSED: report.summary.requests.sent });
  });
});

describe('routerctl bench help', () => {
  it('lists run, compare and capture', async () => {
    const r = await runCli(['bench', '--help']);
    expect(r.code).toBe(0);
    for (const sub of ['run', 'compare', 'capture']) expect(r.stdout).toMatch(new RegExp(`^  routerctl bench ${sub}\\b`, 'm'));
  });

  /**
   * The long options a --help screen lists above its examples (not a wrapped line's), but the program's own --help
   * and --version, which every command has.
   */
  const flagsOf = (help: string): string[] => [
    ...new Set(
      [...help.split(/^Examples:$/m)[0]!.matchAll(/^ {2,6}(?:-\w, )?(--[a-z][a-z0-9-]*)/gm)]
        .map((m) => m[1]!)
        .filter((f) => f !== '--help' && f !== '--version'),
    ),
  ];

  it.each([
    ['run', 28],
    ['compare', 30],
    ['capture', 5],
  ])('bench %s --help lists its own flags, %d of them, no more than 30', async (sub, count) => {
    const r = await runCli(['bench', sub, '--help']);
    expect(r.code).toBe(0);
    const flags = flagsOf(r.stdout);
    expect(flags).toHaveLength(count);
    expect(flags.length).toBeLessThanOrEqual(30);
    // Each carries only its own: an endpoint is run's, sweeps are compare's, the token is capture's.
    if (sub === 'run') expect(flags).not.toEqual(expect.arrayContaining(['--sweep', '--token']));
    if (sub === 'compare') expect(flags).not.toEqual(expect.arrayContaining(['--url', '--token']));
    if (sub === 'capture') expect(flags).toEqual(['--url', '--token', '--duration', '--trace-block-size', '--json']);
  });
});

describe('routerctl bench: the spellings before the subcommands (never released) are gone', () => {
  it.each([
    [['bench', '--url', 'http://x:1', '--duration', '1s']],
    [['bench', '--compare', '', '--policy round_robin']],
    [['bench', '--capture', 'x.jsonl', '--url', 'http://x:1']],
    [['bench', '--url', 'http://x:1', '--sessions', '8']],
  ])('%j exits 2 with a usage error and runs nothing', async (args) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe('');
  });
});

describe('routerctl bench usage errors', () => {
  it.each([
    [['bench'], /name what to bench/],
    [['bench', 'compare', '--url', 'http://x:1', ''], /exclusive/],
    [['bench', 'run', '--url', 'ftp://x'], /--url must be an http\(s\) URL/],
    [['bench', 'run', '--url', 'http://x:1', '--duration', '5 minutes'], /--duration takes a duration/],
    [['bench', 'run', '--url', 'http://x:1', '--chat', 'burst=3x20s/10s'], /--chat burst takes/],
    [['bench', 'run', '--url', 'http://x:1', '--chat', 'system-tokens=4000-1000'], /--chat system-tokens takes MIN-MAX/],
    [['bench', 'run', '--url', 'http://x:1', '--rate', '-2'], /--rate must be a number greater than 0/],
    [['bench', 'run', '--url', 'http://x:1', '--warmup', '10s', '--duration', '5s'], /--warmup must be shorter/],
    [['bench', 'compare', '--worker-urls http://a:1'], /--worker-urls is set by the benchmark/],
    [['bench', 'compare', '--model-id "x'], /unterminated/],
    [['bench', 'compare', '', '--sweep', 'worker-queue-limit'], /--sweep takes FLAG=V1,V2/],
    [['bench', 'run', '--url', 'http://x:1', '--bogus'], /Unknown argument/i],
    [['bench', 'compare'], /name what to compare/],
    [['bench', 'compare', '--preset', 'b2b-saas', '--policy round_robin'], /--preset runs its own fleet, workload and arms/],
    [['bench', 'compare', '--preset', 'no-such-table'], /invalid value 'no-such-table' for --preset: expected one of b2b-saas/],
    [['bench', 'capture', '--url', 'http://x:1'], /bench capture writes a trace: name its file/],
    [['bench', 'capture', 'f.jsonl'], /bench capture listens to a running router: give it with --url/],
    [['bench', 'capture', 'f.jsonl', '--url', 'http://x:1', '--trace', 'T'], /Unknown argument/i],
  ])('%j exits 2 with one line', async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe('');
  });

  it('bench run without --url is one simulated configuration', async () => {
    const r = await runCli(['bench', 'run', '--router-args=--worker-queue-limit 0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/configuration A \(--worker-queue-limit 0\): --worker-queue-limit must be at least 1/);
  });

  it('validates every configuration with the router validator before starting anything', async () => {
    const t0 = Date.now();
    const r = await runCli(['bench', 'compare', '--policy round_robin', '--policy cache_aware --worker-queue-limit 0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/configuration B \(--policy cache_aware --worker-queue-limit 0\): --worker-queue-limit must be at least 1/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});

describe('routerctl bench compare (built binary)', () => {
  it('runs two configurations for 5 s on a tiny fleet: same arrivals, every table field, decision counters, nothing left running', async () => {
    const r = await runCli(
      [
        'bench',
        'compare',
        '--policy round_robin',
        '--policy cache_aware --worker-queue-limit 4',
        '--sim-workers',
        '2',
        '--duration',
        '5s',
        '--grace',
        '2s',
        '--json',
      ],
      { timeoutMs: 90_000 },
    );
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as {
      mode: string;
      same_arrivals: boolean;
      fleet: { workers: number; capacity_rps: number };
      workload: { rate_per_s: number; seed: number };
      runs: Array<
        UrlReport & {
          letter: string;
          label: string;
          url: string;
          worker_urls: string[];
          settings: { policy: string; worker_queue_limit: number | null };
          summary: UrlReport['summary'] & {
            itl_ms: { p50: number | null };
            latency_ms: { p99: number | null };
            throughput: { requests_per_s: number; output_tokens_per_s: number };
          };
          router: { decisions: Record<string, number>; diverted: number; gate_rejections: number } | null;
        }
      >;
    };
    expect(report.mode).toBe('compare');
    expect(report.fleet.workers).toBe(2);
    expect(report.workload.rate_per_s).toBeGreaterThan(0);
    expect(report.runs.map((x) => [x.letter, x.label])).toEqual([
      ['A', '--policy round_robin'],
      ['B', '--policy cache_aware --worker-queue-limit 4'],
    ]);
    expect(report.runs[0]!.settings).toMatchObject({ policy: 'round_robin', worker_queue_limit: null });
    expect(report.runs[1]!.settings).toMatchObject({ policy: 'cache_aware', worker_queue_limit: 4 });

    // The same request sequence: both runs dispatched identical arrivals.
    expect(report.same_arrivals).toBe(true);
    const [a, b] = report.runs;
    expect(a!.arrivals.count).toBeGreaterThan(10);
    expect(b!.arrivals).toEqual(a!.arrivals);

    for (const run of report.runs) {
      const s = run.summary;
      expect(s.requests.ok).toBeGreaterThan(0);
      for (const k of ['p50', 'p90', 'p99'] as const) expect(s.ttft_ms[k]).toBeGreaterThan(0);
      expect(s.itl_ms.p50).toBeGreaterThan(0);
      expect(s.latency_ms.p99).toBeGreaterThan(0);
      expect(s.throughput.requests_per_s).toBeGreaterThan(0);
      expect(s.cache.ratio).toBeGreaterThan(0);
      expect(run.router).not.toBeNull();
    }
    const sum = (d: Record<string, number>): number => Object.values(d).reduce((x, y) => x + y, 0);
    // round_robin makes no cache-aware decisions; cache_aware books one per routed request.
    expect(sum(a!.router!.decisions)).toBe(0);
    expect(sum(b!.router!.decisions)).toBeGreaterThanOrEqual(b!.summary.requests.ok);

    // Every router and engine the comparison started is gone.
    for (const url of report.runs.flatMap((x) => [x.url, ...x.worker_urls])) expect(await refused(url)).toBe(true);
  }, 120_000);

  it('SIGTERM stops the comparison, prints what ran, exits 130 and leaves no fleet or router behind', async () => {
    const bench = startCli(['bench', 'compare', '', '--policy round_robin', '--sim-workers', '1', '--duration', '30s', '--json']);
    try {
      await new Promise((r) => setTimeout(r, 5000));
      bench.child.kill('SIGTERM');
      const { code } = await bench.exited(15_000);
      expect(code).toBe(130);
      const report = JSON.parse(bench.stdout()) as {
        interrupted: boolean;
        runs: Array<{ url: string; worker_urls: string[]; interrupted: boolean }>;
      };
      expect(report.interrupted).toBe(true);
      expect(report.runs.length).toBeLessThanOrEqual(1);
      for (const url of report.runs.flatMap((x) => [x.url, ...x.worker_urls])) expect(await refused(url)).toBe(true);
    } finally {
      bench.child.kill('SIGKILL');
    }
  }, 60_000);
});
