/**
 * What the fleet benchmarks (`fleet-scale`, `peers-fleet`) read of a router in front of
 * thousands of workers: its CPU and memory from /proc, a document's fetch time by an
 * independent client (curl, as a Prometheus scraper is), and short chats' percentiles
 * at a few connections by wrk (else undici).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';

export const HAS_WRK = spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
export const HAS_CURL = spawnSync('curl', ['--version'], { encoding: 'utf8' }).error === undefined;
const TICKS = 100; // USER_HZ on Linux

/** CPU seconds a process (all its threads) has used so far. */
export function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

export const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Time to fetch `url` whole, median of 5, by curl when it is there (an independent
 * client, as a Prometheus scraper is), else by undici.
 */
export async function timed(url: string): Promise<{ ms: number; first_ms: number; bytes: number }> {
  const runs: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 5; i++) {
    if (HAS_CURL) {
      const r = spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{time_total} %{size_download}', url], { encoding: 'utf8' });
      const [total, size] = r.stdout.trim().split(' ').map(Number);
      runs.push(total! * 1000);
      bytes = size!;
      continue;
    }
    const t0 = performance.now();
    const res = await request(url);
    const body = await res.body.arrayBuffer();
    runs.push(performance.now() - t0);
    bytes = body.byteLength;
  }
  return { ms: Number(median(runs).toFixed(1)), first_ms: Number(runs[0]!.toFixed(1)), bytes };
}

const BODY = JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 });

/** wrk's report, with the event loop free while it runs. */
function runWrk(args: string[]): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.once('error', reject);
    child.once('exit', () => resolve({ stdout }));
  });
}

/** Percentiles of short chats for `seconds` at `connections` connections (8, or 1 for an unloaded router), in ms. */
export async function latency(
  url: string,
  dir: string,
  seconds: number,
  connections = 8,
): Promise<{ p50: number; p99: number; p999: number; max: number; rps: number }> {
  if (HAS_WRK) {
    const lua = path.join(dir, 'post.lua');
    // wrk prints p99 at most; its done() hook reads the rest of the same histogram (µs).
    writeFileSync(
      lua,
      `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '${BODY}'\n` +
        `done = function(summary, latency, requests)\n  io.write(string.format("tail p99.9=%.0f max=%.0f\\n", latency:percentile(99.9), latency.max))\nend\n`,
    );
    // Not spawnSync: the stream reader and the GC counter read while wrk runs.
    const r = await runWrk(['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', lua, `${url}/v1/chat/completions`]);
    const pick = (q: string): number => {
      const m = new RegExp(`\\s${q}%\\s+([\\d.]+)(us|ms|s)`).exec(r.stdout);
      if (!m) return NaN;
      const v = Number(m[1]);
      return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
    };
    const tail = /tail p99\.9=(\d+) max=(\d+)/.exec(r.stdout);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1] ?? NaN);
    return { p50: pick('50'), p99: pick('99'), p999: Number(tail?.[1] ?? NaN) / 1000, max: Number(tail?.[2] ?? NaN) / 1000, rps };
  }
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await request(`${url}/v1/chat/completions`, {
          method: 'POST',
          body: BODY,
          headers: { 'content-type': 'application/json' },
        });
        await res.body.text();
        times.push(performance.now() - t0);
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (q: number): number => times[Math.floor(times.length * q)]!;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: times[times.length - 1]!, rps: times.length / seconds };
}
