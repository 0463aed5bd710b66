/**
 * How many simulated requests per second one `routerctl sim` engine process sustains.
 *
 * Starts the built binary with one engine (real process, real HTTP on loopback) at a
 * high --speedup so that the model's own time is negligible, then drives it with
 * undici at a fixed concurrency and reports completed requests per second, for short
 * non-streaming and streaming chat completions.
 *
 *   npm run perf -- sim            (or: node dist/perf/sim-engine.js --seconds 10)
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { writeResult } from './support/results.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const seconds = Number(args.get('seconds') ?? 8);
const concurrency = Number(args.get('concurrency') ?? 64);
const maxTokens = Number(args.get('max-tokens') ?? 16);

const bin = fileURLToPath(new URL('../../bin/routerctl.js', import.meta.url));

async function startEngine(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [bin, 'sim', '-n', '1', '--port-base', '0', '--json', '--speedup', '1000', '--max-running', '256'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { urls: string[] }).urls[0]!);
    });
    child.once('exit', () => reject(new Error('sim exited early')));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function drive(url: string, stream: boolean): Promise<{ rps: number; errors: number }> {
  const pool = new Pool(url, { connections: concurrency });
  let done = 0;
  let errors = 0;
  let i = 0;
  const deadline = performance.now() + seconds * 1000;
  const body = (n: number) =>
    JSON.stringify({
      messages: [{ role: 'user', content: `benchmark request ${n} with a short prompt` }],
      max_tokens: maxTokens,
      ignore_eos: true,
      stream,
    });
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const res = await pool.request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body(i++),
      });
      await res.body.dump({ limit: Infinity });
      if (res.statusCode === 200) done++;
      else errors++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  await pool.close();
  return { rps: done / elapsed, errors };
}

const engine = await startEngine();
try {
  await drive(engine.url, false); // warm-up pass is discarded below by running again
  const plain = await drive(engine.url, false);
  const sse = await drive(engine.url, true);
  const row = (name: string, r: { rps: number; errors: number }) =>
    `| ${name} | ${concurrency} | ${maxTokens} | ${r.rps.toFixed(0)} | ${r.errors} |`;
  console.log(`node ${process.version}, ${seconds}s per run`);
  console.log('| mode | concurrency | max_tokens | requests/s | errors |');
  console.log('|---|---|---|---|---|');
  console.log(row('non-streaming', plain));
  console.log(row('streaming (SSE)', sse));
  writeResult('sim', {
    figures: {
      concurrency,
      max_tokens: maxTokens,
      non_streaming_rps: Math.round(plain.rps),
      non_streaming_errors: plain.errors,
      streaming_rps: Math.round(sse.rps),
      streaming_errors: sse.errors,
    },
    bottleneck: 'the one sim engine process (the client runs in this process)',
  });
} finally {
  await engine.stop();
}
