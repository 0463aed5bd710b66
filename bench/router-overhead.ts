/**
 * Router throughput and added latency against a bare undici pass-through proxy, in
 * the same run, in front of the same simulated engines, driven by the same client.
 *
 *   npm run build && node dist/bench/router-overhead.js [--seconds 6] [--concurrency 64] [--rounds 3]
 *
 * Engines run at --speedup 1000 with room for 256 running requests, so the engines
 * are not the bottleneck; the client, both proxies and the engines share this
 * machine's cores, so read the ratio, not the absolute numbers. Each proxy runs in
 * its own process; rounds alternate so drift hits both alike.
 */
import { fileURLToPath } from 'node:url';
import { ROUTERCTL_BIN, chatThroughput, startProcess, stopProcess } from './support/processes.js';
import { Pool } from 'undici';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const seconds = arg('seconds', 6);
const concurrency = arg('concurrency', 64);
const rounds = arg('rounds', 3);
const bin = ROUTERCTL_BIN;
const bare = fileURLToPath(new URL('./bare-proxy.js', import.meta.url));

const body = (i: number) => JSON.stringify({ messages: [{ role: 'user', content: `overhead probe ${i % 97}` }], max_tokens: 4, ignore_eos: true });

const throughput = (url: string): Promise<number> => chatThroughput(url, seconds, concurrency, body);

async function latencyP50(url: string, n = 2000): Promise<number> {
  const pool = new Pool(url, { connections: 1 });
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body: body(i) });
    await r.body.dump({ limit: Infinity });
    if (i >= 200) samples.push(performance.now() - t0); // after warm-up
  }
  await pool.close();
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const sim = await startProcess([bin, 'sim', '-n', '3', '--port-base', '0', '--json', '--speedup', '1000', '--max-running', '256'], /"urls":(\[[^\]]*\])/);
const engines = JSON.parse(sim.out) as string[];
const router = await startProcess([bin, 'serve', '--no-tui', '--port', '0', '--worker-urls', ...engines, '--worker-queue-limit', '64'], /^(http:\/\/\S+)$/m);
const proxy = await startProcess([bare, ...engines], /^(http:\/\/\S+)$/m);
try {
  await throughput(router.out);
  await throughput(proxy.out); // warm both
  const r: number[] = [];
  const p: number[] = [];
  for (let k = 0; k < rounds; k++) {
    p.push(await throughput(proxy.out));
    r.push(await throughput(router.out));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const direct = await latencyP50(engines[0]!);
  const viaProxy = await latencyP50(proxy.out);
  const viaRouter = await latencyP50(router.out);
  console.log(`node ${process.version}; ${rounds} alternating rounds of ${seconds}s at concurrency ${concurrency}; 3 sim engines (speedup 1000)`);
  console.log('| path | requests/s (mean) | rounds | p50 latency, 1 client | added over direct |');
  console.log('|---|---|---|---|---|');
  console.log(`| engine direct | — | — | ${direct.toFixed(3)} ms | — |`);
  console.log(`| bare undici proxy | ${mean(p).toFixed(0)} | ${p.map((x) => x.toFixed(0)).join(', ')} | ${viaProxy.toFixed(3)} ms | ${(viaProxy - direct).toFixed(3)} ms |`);
  console.log(`| routerctl (cache_aware, gate on) | ${mean(r).toFixed(0)} | ${r.map((x) => x.toFixed(0)).join(', ')} | ${viaRouter.toFixed(3)} ms | ${(viaRouter - direct).toFixed(3)} ms |`);
  console.log(`\nrouter / bare proxy throughput: ${(mean(r) / mean(p)).toFixed(2)}x; router p50 added latency over the bare proxy: ${(viaRouter - viaProxy).toFixed(3)} ms`);
} finally {
  await Promise.all([stopProcess(router.child), stopProcess(proxy.child), stopProcess(sim.child)]);
}
