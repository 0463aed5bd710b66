/**
 * What an attached console costs the router: throughput with and without a client on
 * its admin stream at 4 updates/s (interval_ms=250), same router, same engines, same
 * load, runs alternating so drift hits both alike.
 *
 *   npm run perf -- console [--seconds 8] [--concurrency 64] [--rounds 4] [--client sse|feed|tmux]
 *
 * The router runs as `serve --no-tui` in its own process, the engines as `sim` at
 * --speedup 1000 with room for 256 running requests (not the bottleneck), and this
 * process drives short non-streaming chat completions with undici at a fixed
 * concurrency. The attached client:
 *   sse   (default) a separate process reading /admin/stream and discarding it: what
 *         serving the console costs the router itself;
 *   feed  the console's data client (FleetFeed: SSE, parsing, merging, rates) in this
 *         process, next to the load generator;
 *   tmux  a real `routerctl top --interval-ms 250` drawing in a detached tmux terminal:
 *         the whole console, competing for the same cores as it would on the router's
 *         own machine.
 * Read the difference against the spread of the runs, not the absolute numbers.
 */
import { spawn, spawnSync } from 'node:child_process';
import { ROUTERCTL_BIN, chatThroughput, startProcess, stopProcess } from './support/processes.js';
import { request } from 'undici';
import { FleetFeed } from '../src/fleet/index.js';
import { benchArg } from './support/args.js';
import { writeResult } from './support/results.js';

const seconds = Number(benchArg('seconds', '8'));
const concurrency = Number(benchArg('concurrency', '64'));
const rounds = Number(benchArg('rounds', '4'));
const INTERVAL_MS = 250;
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const clientKind = benchArg('client', 'sse');
if (clientKind === 'tmux' && !hasTmux) throw new Error('--client tmux needs tmux');
const bin = ROUTERCTL_BIN;

const body = (i: number): string =>
  JSON.stringify({ messages: [{ role: 'user', content: `console overhead probe ${i % 97}` }], max_tokens: 4, ignore_eos: true });

const throughput = (url: string): Promise<number> => chatThroughput(url, seconds, concurrency, body);

interface Attached {
  /** Throws unless the console was still receiving state at the end of the run. */
  assertLive(): void;
  detach(): Promise<void>;
}

async function attach(url: string): Promise<Attached> {
  if (clientKind === 'sse') {
    // A bare reader: counts events so the run can check the stream really was live.
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `let n=0;require('http').get(process.argv[1]+'/admin/stream?interval_ms=${INTERVAL_MS}',r=>r.on('data',c=>{n+=c.toString().split('event: state').length-1;process.stdout.write(n+'\\n')}))`,
        url,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let events = 0;
    reader.stdout!.on('data', (c: Buffer) => (events = Number(c.toString().trim().split('\n').at(-1))));
    await new Promise((res) => setTimeout(res, 500));
    const before = events;
    const t0 = performance.now();
    return {
      assertLive: () => {
        const expected = (performance.now() - t0) / INTERVAL_MS;
        if (events - before < expected * 0.8)
          throw new Error(`the stream carried ${events - before} events, expected about ${expected.toFixed(0)}`);
      },
      detach: () => stopProcess(reader, 'SIGKILL'),
    };
  }
  if (clientKind === 'tmux') {
    const server = `rctl-bench-${process.pid}`;
    const tmux = (...a: string[]) => spawnSync('tmux', ['-L', server, ...a], { encoding: 'utf8' });
    const r = tmux(
      'new-session',
      '-d',
      '-x',
      '120',
      '-y',
      '40',
      `env -u CI NODE_ENV=production ${process.execPath} ${bin} top --url ${url} --interval-ms ${INTERVAL_MS}`,
    );
    if (r.status !== 0) throw new Error(`tmux: ${r.stderr}`);
    await new Promise((res) => setTimeout(res, 1500));
    return {
      assertLive: () => {
        // The header says how old the newest state is; at 4 updates/s it stays well under a second.
        const screen = tmux('capture-pane', '-p').stdout;
        const age = screen.match(/updated (\d+)ms ago/);
        if (!age || Number(age[1]) > 1000) throw new Error(`the console was not live:\n${screen}`);
      },
      detach: async () => void tmux('kill-server'),
    };
  }
  const feed = FleetFeed.start({ urls: [url], source: 'admin', intervalMs: INTERVAL_MS });
  let n = 0;
  const unsubscribe = feed.subscribe(() => n++);
  await new Promise((res) => setTimeout(res, 500));
  const before = n;
  const t0 = performance.now();
  return {
    assertLive: () => {
      const expected = (performance.now() - t0) / INTERVAL_MS;
      if (n - before < expected * 0.8) throw new Error(`the feed got ${n - before} updates, expected about ${expected.toFixed(0)}`);
    },
    detach: async () => {
      unsubscribe();
      await feed.close();
    },
  };
}

const sim = await startProcess(
  [bin, 'sim', '-n', '3', '--port-base', '0', '--json', '--speedup', '1000', '--max-running', '256'],
  /"urls":(\[[^\]]*\])/,
);
const engines = JSON.parse(sim.out) as string[];
const router = await startProcess(
  [bin, 'serve', '--no-tui', '--port', '0', '--worker-urls', ...engines, '--worker-queue-limit', '64'],
  /^(http:\/\/\S+)$/m,
);
const url = router.out;
try {
  // Warm-up: JIT, connection pools, the prefix index.
  await throughput(url);
  const rows: Array<{ round: number; console: boolean; rps: number }> = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate which goes first, so neither always runs on a warmer machine.
    const order = round % 2 === 1 ? [false, true] : [true, false];
    for (const withConsole of order) {
      const attached = withConsole ? await attach(url) : undefined;
      const rps = await throughput(url);
      attached?.assertLive();
      await attached?.detach();
      rows.push({ round, console: withConsole, rps });
    }
  }
  const stats = (xs: number[]): { mean: number; sd: number } => {
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    return { mean, sd: Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1)) };
  };
  const off = stats(rows.filter((r) => !r.console).map((r) => r.rps));
  const on = stats(rows.filter((r) => r.console).map((r) => r.rps));
  const state = (await (await request(`${url}/admin/state`)).body.json()) as { workers: unknown[] };
  const lines = [
    `Console overhead: router throughput with and without a console attached (admin stream, interval_ms=${INTERVAL_MS}; client: ${{ sse: 'a separate process reading /admin/stream', feed: 'FleetFeed in the load-generator process', tmux: '`routerctl top --interval-ms 250` drawing in tmux' }[clientKind]}).`,
    `${state.workers.length} simulated engines (--speedup 1000), concurrency ${concurrency}, ${seconds} s per run, non-streaming chat, max_tokens 4, ${rounds} alternating rounds.`,
    '',
    '| round | console | req/s |',
    '|---:|:---|---:|',
    ...rows.map((r) => `| ${r.round} | ${r.console ? 'attached' : 'none'} | ${r.rps.toFixed(0)} |`),
    '',
    '| console | mean req/s | sd | runs |',
    '|:---|---:|---:|---:|',
    `| none | ${off.mean.toFixed(0)} | ${off.sd.toFixed(0)} | ${rounds} |`,
    `| attached, 4 updates/s | ${on.mean.toFixed(0)} | ${on.sd.toFixed(0)} | ${rounds} |`,
    '',
    `Difference: ${(((on.mean - off.mean) / off.mean) * 100).toFixed(1)}% (run-to-run sd without a console: ${((off.sd / off.mean) * 100).toFixed(1)}%).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const differencePct = ((on.mean - off.mean) / off.mean) * 100;
  const sdPct = (off.sd / off.mean) * 100;
  writeResult('console', {
    figures: {
      client: clientKind,
      rounds,
      without_console_rps: Math.round(off.mean),
      with_console_rps: Math.round(on.mean),
      difference_pct: Number(differencePct.toFixed(1)),
      run_to_run_sd_pct: Number(sdPct.toFixed(1)),
      within_noise: Math.abs(differencePct) <= sdPct,
    },
    bottleneck: 'the router process; client, router and engines share the machine',
  });
} finally {
  await stopProcess(router.child, 'SIGKILL');
  await stopProcess(sim.child, 'SIGKILL');
}
