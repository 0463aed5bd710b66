/**
 * What a second router process would give on this machine: one
 * `routerctl serve` driven by one wrk at 2N connections, against two `serve`
 * processes, each with its own prefix index and load table, driven at once by two wrk
 * clients at N connections each. Same near-free upstreams (perf/support/fast-upstream.ts),
 * short prompts, nothing pinned (a second process needs a second core), rounds
 * alternating. Needs wrk.
 *
 *   npm run perf -- second-process [--seconds 4] [--rounds 3] [--connections 32]
 *
 * Two processes route by two indexes, so their decisions differ from one process's:
 * this measures the throughput on offer, not a mode routerctl has (BENCHMARKS.md,
 * section 2).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { benchArg } from './support/args.js';
import { writeResult } from './support/results.js';

const seconds = Number(benchArg('seconds', '4'));
const rounds = Number(benchArg('rounds', '3'));
const connections = Number(benchArg('connections', '32'));
if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('perf second-process needs wrk on PATH');
const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));

const work = mkdtempSync(path.join(tmpdir(), 'routerctl-second-'));
const body = path.join(work, 'short.json');
writeFileSync(body, JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: 'Say hello in one word.' }], max_tokens: 8 }));
const lua = path.join(work, 'post.lua');
writeFileSync(
  lua,
  `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nlocal f = io.open("${body}", "rb")\nwrk.body = f:read("*a")\nf:close()\n`,
);

/** One wrk run's requests per second. */
function wrk(url: string, conns: number): Promise<number> {
  const child = spawn('wrk', ['-t1', `-c${conns}`, `-d${seconds}s`, '--timeout', '10s', '-s', lua, `${url}/v1/chat/completions`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) => child.once('exit', () => resolve(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN))));
}

const upstream = await startProcess([here('./support/fast-upstream.js'), '3'], /^(http:\/\/.+)$/m);
const urls = upstream.out.trim().split(' ');
const serve = (): ReturnType<typeof startProcess> =>
  startProcess(
    [ROUTERCTL_BIN, 'serve', '--no-tui', '--port', '0', '--worker-urls', ...urls, '--policy', 'cache_aware', '--worker-queue-limit', '64'],
    /^(http:\/\/\S+)$/m,
  );
const [a, b] = await Promise.all([serve(), serve()]);
try {
  // Warm both before measuring.
  await Promise.all([wrk(a.out, connections), wrk(b.out, connections)]);
  console.log(
    `node ${process.version}; wrk -t1; ${rounds} rounds of ${seconds} s; short prompts; router --policy cache_aware; not pinned\n`,
  );
  console.log(`| round | one process, ${2 * connections} connections | two processes, ${connections} + ${connections} | two / one |`);
  console.log('|---:|---:|---:|---:|');
  const gains: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    const one = await wrk(a.out, 2 * connections);
    const [x, y] = await Promise.all([wrk(a.out, connections), wrk(b.out, connections)]);
    gains.push((x + y) / one);
    console.log(
      `| ${r} | ${one.toFixed(0)} | ${x.toFixed(0)} + ${y.toFixed(0)} = ${(x + y).toFixed(0)} | ${((x + y) / one).toFixed(2)}× |`,
    );
  }
  const sorted = [...gains].sort((p, q) => p - q);
  writeResult('second-process', {
    figures: {
      rounds,
      connections,
      two_over_one_median: Number(sorted[sorted.length >> 1]!.toFixed(2)),
      two_over_one_min: Number(sorted[0]!.toFixed(2)),
      two_over_one_max: Number(sorted.at(-1)!.toFixed(2)),
    },
    bottleneck: "the machine's two cores: the upstream and wrk leave a second router little of a core",
  });
} finally {
  await Promise.all([stopProcess(a.child), stopProcess(b.child), stopProcess(upstream.child)]);
  rmSync(work, { recursive: true, force: true });
}
