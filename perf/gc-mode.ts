/**
 * Which garbage-collector mode a router process settles in under traffic spread over
 * 4,096 workers (docs/dependencies.md §Idle connections and the young generation). In
 * the low mode a scavenge promotes some tens of kilobytes; in the high one megabytes,
 * every object of every request, and its pauses set the p99. The mode is per process
 * and steady, so this starts `--processes` routers in turn on one stub
 * (perf/support/fast-upstream.ts), each given wrk -c8 short chats for `--seconds` to
 * warm up and as long again measured under `--trace-gc-nvp`, and prints each one's
 * scavenges, mean pause and mean promoted bytes. `--router-args "..."` changes the
 * router under test (`--policy round_robin --decision-log-size 0` leaves out the prefix
 * index, the ladder and the decision ring); `--router-node-flags "..."` gives node options to
 * the router's process (`--allocation-site-pretenuring` keeps V8's pretenuring on, as the
 * router was before it turned it off: src/serve/young-generation.ts); `--bare` runs the
 * bare proxy on the router's own pool (perf/support/bare-proxy.ts --api pool) as many
 * times after it.
 *
 *   npm run perf -- gc-mode [--processes 6] [--seconds 8] [--router-args "..."] [--router-node-flags "..."] [--bare]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArg, benchWords } from './support/args.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { writeResult } from './support/results.js';
import type { Figures } from './support/results.js';

const PROCESSES = Number(benchArg('processes', '6'));
const SECONDS = Number(benchArg('seconds', '8'));
const ROUTER_ARGS = benchWords('router-args', '--worker-queue-limit 6');
const NODE_FLAGS = benchWords('router-node-flags');
const BARE = process.argv.includes('--bare');
/** Promoted bytes a scavenge above which a process is in the high mode: the two modes are 20-60 KB and 2-3 MB apart. */
const HIGH_MODE_BYTES = 512 * 1024;
const BODY = JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 });
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

function wrk(url: string, lua: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t1', '-c8', `-d${SECONDS}s`, '-s', lua, `${url}/v1/chat/completions`], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
}

interface Mode {
  scavenges: number;
  pauseMs: number;
  promotedKb: number;
}

/** One process under `--trace-gc-nvp`: warmed, then its scavenges while measured traffic runs. */
async function oneProcess(cmd: string[], lua: string): Promise<Mode> {
  const p = await startProcess(['--trace-gc-nvp', ...cmd], /^(http:\/\/\S+)$/m);
  const lines: string[] = [];
  let counting = false;
  let tail = '';
  p.child.stdout!.on('data', (c: Buffer) => {
    const text = tail + c.toString();
    const cut = text.lastIndexOf('\n');
    tail = text.slice(cut + 1);
    if (counting) for (const l of text.slice(0, cut).split('\n')) if (l.includes(' gc=s ')) lines.push(l);
  });
  try {
    await wrk(p.out, lua);
    counting = true;
    await wrk(p.out, lua);
    counting = false;
  } finally {
    await stopProcess(p.child, 'SIGINT');
  }
  const mean = (key: string): number =>
    lines.reduce((sum, l) => sum + Number(new RegExp(` ${key}=([\\d.]+)`).exec(l)?.[1] ?? 0), 0) / Math.max(1, lines.length);
  return { scavenges: lines.length, pauseMs: Number(mean('pause').toFixed(2)), promotedKb: Math.round(mean('promoted') / 1024) };
}

const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-gc-mode-'));
const upstream = await startProcess([here('./support/fast-upstream.js'), '4096'], /^(http:\/\/.+)$/m);
try {
  const urls = upstream.out.trim().split(' ');
  const rc = path.join(dir, 'routerrc.json');
  writeFileSync(rc, JSON.stringify({ 'worker-urls': urls }));
  const lua = path.join(dir, 'post.lua');
  writeFileSync(lua, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '${BODY}'\n`);
  const kinds: Array<[string, string[]]> = [
    ['router', [...NODE_FLAGS, ROUTERCTL_BIN, 'serve', '--no-tui', '--port', '0', '--config', rc, ...ROUTER_ARGS]],
  ];
  if (BARE) kinds.push(['bare proxy (pool)', [here('./support/bare-proxy.js'), '--api', 'pool', ...urls]]);
  console.log(
    `node ${process.version}; 4,096 workers; wrk -t1 -c8, ${SECONDS} s warm then ${SECONDS} s measured; router args: ${ROUTER_ARGS.join(' ')}; node flags: ${NODE_FLAGS.join(' ') || 'none'}`,
  );
  console.log('| process | run | scavenges | mean pause | mean promoted | mode |');
  console.log('|---|---:|---:|---:|---:|---|');
  const figures: Figures = { processes: PROCESSES, router_args: ROUTER_ARGS.join(' '), router_node_flags: NODE_FLAGS.join(' ') };
  for (const [kind, cmd] of kinds) {
    const modes: Mode[] = [];
    for (let i = 0; i < PROCESSES; i++) {
      const m = await oneProcess(cmd, lua);
      modes.push(m);
      const high = m.promotedKb * 1024 > HIGH_MODE_BYTES;
      console.log(`| ${kind} | ${i + 1} | ${m.scavenges} | ${m.pauseMs} ms | ${m.promotedKb} KB | ${high ? 'high' : 'low'} |`);
    }
    const key = kind === 'router' ? 'router' : 'bare_pool';
    figures[`${key}_high_mode_processes`] = modes.filter((m) => m.promotedKb * 1024 > HIGH_MODE_BYTES).length;
    figures[`${key}_promoted_kb`] = modes.map((m) => m.promotedKb).join(' ');
    figures[`${key}_pause_ms`] = modes.map((m) => m.pauseMs).join(' ');
  }
  writeResult('gc-mode', {
    figures,
    goals: [],
    bottleneck: 'the process under test, one core, beside the stub and wrk on 2 cores; the figure is its collector, not its throughput',
  });
} finally {
  await stopProcess(upstream.child);
  rmSync(dir, { recursive: true, force: true });
}
