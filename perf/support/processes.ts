import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

/** The built CLI, as benchmarks start it. */
export const ROUTERCTL_BIN = fileURLToPath(new URL('../../../bin/routerctl.js', import.meta.url));

/**
 * Start a node process and resolve with the first capture of `match` on its stdout.
 * `cpus` (a taskset list, e.g. "1") pins it and its threads to those cores.
 */
export function startProcess(cmd: string[], match: RegExp, cpus?: string): Promise<{ out: string; child: ChildProcess }> {
  const [file, args] = cpus === undefined ? [process.execPath, cmd] : ['taskset', ['-c', cpus, process.execPath, ...cmd]];
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, NODE_ENV: 'production' } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      // Whole lines only: a long line (4,096 URLs) arrives in several chunks, and a match on the first would cut it.
      const m = out.slice(0, out.lastIndexOf('\n') + 1).match(match);
      if (m) resolve({ out: m[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`${cmd.join(' ')} exited ${code}`)));
  });
}

/** The built CLI run to its end with `args` (ending in `--json`), its stdout parsed; a non-zero exit throws with the tail of its stderr. */
export function routerctlJson<T>(args: readonly string[]): T {
  const r = spawnSync(process.execPath, [ROUTERCTL_BIN, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`routerctl ${args[0]} ${args[1] ?? ''} exited ${r.status}: ${r.stderr.slice(-400)}`);
  return JSON.parse(r.stdout) as T;
}

export function stopProcess(c: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise<void>((r) => {
    if (c.exitCode !== null || c.signalCode !== null) return r();
    c.once('exit', () => r());
    c.kill(signal);
  });
}

/** Completed requests per second for `seconds`, `concurrency` clients in a loop. */
export async function chatThroughput(url: string, seconds: number, concurrency: number, body: (i: number) => string): Promise<number> {
  const pool = new Pool(url, { connections: concurrency });
  let done = 0;
  let i = 0;
  const until = performance.now() + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < until) {
      const r = await pool.request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body(i++),
      });
      await r.body.dump({ limit: Infinity });
      if (r.statusCode === 200) done++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const rps = done / ((performance.now() - t0) / 1000);
  await pool.close();
  return rps;
}
