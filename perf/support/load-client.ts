/**
 * The fallback load client when wrk is not installed: undici in a process of its own,
 * `connections` requests kept in flight for `seconds`, the same body each time.
 *
 *   node dist/perf/support/load-client.js URL BODY_FILE SECONDS CONNECTIONS
 * prints {"requests","errors","seconds","p50Ms","p99Ms"} as JSON on stdout.
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [url, bodyFile, secondsArg, connArg] = process.argv.slice(2);
const body = readFileSync(bodyFile!);
const seconds = Number(secondsArg);
const connections = Number(connArg);
const pool = new Pool(url!, { connections });
const latencies: number[] = [];
let errors = 0;
const until = performance.now() + seconds * 1000;
const loop = async (): Promise<void> => {
  while (performance.now() < until) {
    const t0 = performance.now();
    try {
      const r = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await r.body.dump({ limit: Infinity });
      if (r.statusCode === 200) latencies.push(performance.now() - t0);
      else errors++;
    } catch {
      errors++;
    }
  }
};
const t0 = performance.now();
await Promise.all(Array.from({ length: connections }, loop));
const elapsed = (performance.now() - t0) / 1000;
await pool.close();
latencies.sort((a, b) => a - b);
const q = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
process.stdout.write(`${JSON.stringify({ requests: latencies.length, errors, seconds: elapsed, p50Ms: q(0.5), p99Ms: q(0.99) })}\n`);
