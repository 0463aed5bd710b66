/**
 * The request-path rig the `overhead` and `peers` benchmarks share: bodies of each
 * prompt size, a client in its own process (wrk when installed, else an undici client:
 * perf/support/load-client.ts), pinning (the proxy under test alone on the last core,
 * the upstream and the client on the others), and every process's CPU read from /proc
 * over each run, with how busy the shared cores were, so a run that something other
 * than the proxy paced says so instead of giving a figure.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemPrompt } from '../../src/workload/index.js';

/** Share of one core a process used past this is saturated: it, not the proxy, set the pace. */
export const SATURATED = 0.9;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
export const HAS_WRK = spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
const CORES = availableParallelism();
export const CAN_PIN = CORES >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** CPU seconds a process has used so far in user space and in the kernel, from /proc. */
export function cpuTimes(pid: number): { user: number; kernel: number } {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: Number(fields[11]) / CLK_TCK, kernel: Number(fields[12]) / CLK_TCK };
  } catch {
    return { user: NaN, kernel: NaN };
  }
}

function cpuSeconds(pid: number): number {
  const t = cpuTimes(pid);
  return t.user + t.kernel;
}

/** Busy and total ticks of the given cores so far, from /proc/stat (idle and iowait are not busy). */
function coreTicks(cores: number[]): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  try {
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const m = /^cpu(\d+) (.*)$/.exec(line);
      if (!m || !cores.includes(Number(m[1]))) continue;
      const t = m[2]!.trim().split(/\s+/).map(Number);
      const all = t.slice(0, 8).reduce((a, x) => a + x, 0);
      total += all;
      busy += all - t[3]! - t[4]!;
    }
  } catch {
    return { busy: NaN, total: NaN };
  }
  return { busy, total };
}

export interface Run {
  rps: number;
  p50Ms: number;
  /** NaN from the undici client, which reports no p99. */
  p99Ms: number;
  errors: number;
  /** Share of one core over the run, per process name. */
  cpu: Record<string, number>;
  /** Each watched process's CPU per request of this run, in µs, user space and kernel apart (read the one the run drove). */
  perRequestUs: Record<string, { user: number; kernel: number }>;
  /**
   * Pinned: how busy the cores the upstream and the client share were, all work on
   * them counted (the kernel's network processing too, which no process is charged for).
   */
  sharedBusy: number;
}

function parseWrk(out: string): { rps: number; p50Ms: number; p99Ms: number; errors: number } {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const pct = (p: string): number => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)\\b`).exec(out);
    return m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (sock ? sock.slice(1).reduce((a, x) => a + Number(x), 0) : 0);
  return { rps, p50Ms: pct('50'), p99Ms: pct('99'), errors };
}

function loadClientResult(out: string): { rps: number; p50Ms: number; p99Ms: number; errors: number } {
  const j = JSON.parse(out) as { requests: number; errors: number; seconds: number; p50Ms: number };
  return { rps: j.requests / j.seconds, p50Ms: j.p50Ms, p99Ms: NaN, errors: j.errors };
}

export class RequestPathRig {
  readonly pin: boolean;
  /** Cores for the proxy under test (the last one), and for everything else. */
  readonly proxyCpus: string | undefined;
  readonly otherCpus: string | undefined;
  /** The cores the upstream and the client share when pinned. */
  readonly sharedCores: number[];
  readonly #work = mkdtempSync(path.join(tmpdir(), 'routerctl-request-path-'));
  readonly #lua = path.join(this.#work, 'post.lua');

  constructor(pin: 'on' | 'off' | string) {
    this.pin = pin === 'on';
    if (this.pin && !CAN_PIN) throw new Error('--pin on needs taskset and at least two cores');
    this.proxyCpus = this.pin ? String(CORES - 1) : undefined;
    this.otherCpus = this.pin ? `0-${CORES - 2}` : undefined;
    this.sharedCores = Array.from({ length: CORES - 1 }, (_, i) => i);
    writeFileSync(
      this.#lua,
      'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nlocal f = io.open(os.getenv("BODY_FILE"), "rb")\nwrk.body = f:read("*a")\nf:close()\n',
    );
  }

  /** A chat body: `short`, `16k` (4K tokens of system prompt) or `400k` (100K tokens). */
  bodyFile(size: string, model = 'fast'): string {
    const system = size === 'short' ? '' : systemPrompt(5, 0, size === '16k' ? 4_000 : 100_000);
    const messages = system ? [{ role: 'system', content: system }] : [];
    messages.push({ role: 'user', content: 'Say hello in one word.' });
    const file = path.join(this.#work, `${size}-${model}.json`);
    writeFileSync(file, JSON.stringify({ model, messages, max_tokens: 8 }));
    return file;
  }

  /** One client run against `url`, with every named process's CPU share over it. */
  async drive(url: string, file: string, conns: number, secs: number, watch: Record<string, number>): Promise<Run> {
    const target = `${url}/v1/chat/completions`;
    const [client, clientArgs] = HAS_WRK
      ? ['wrk', ['-t1', `-c${conns}`, `-d${secs}s`, '--timeout', '10s', '--latency', '-s', this.#lua, target]]
      : [process.execPath, [fileURLToPath(new URL('./load-client.js', import.meta.url)), url, file, String(secs), String(conns)]];
    const [cmd, args] = this.otherCpus === undefined ? [client, clientArgs] : ['taskset', ['-c', this.otherCpus, client, ...clientArgs]];
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, BODY_FILE: file } });
    const pids: Record<string, number> = { ...watch, client: child.pid! };
    const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTimes(pid)]));
    const sharedBefore = coreTicks(this.sharedCores);
    const t0 = performance.now();
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    // Sample the client's CPU just before it exits: /proc forgets it after.
    let clientCpu = NaN;
    const sampler = setInterval(() => {
      const v = cpuSeconds(child.pid!);
      if (Number.isFinite(v)) clientCpu = v;
    }, 100);
    await new Promise<void>((r) => child.once('exit', () => r()));
    clearInterval(sampler);
    const wall = (performance.now() - t0) / 1000;
    const after = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTimes(pid)]));
    const cpu: Record<string, number> = {};
    for (const k of Object.keys(pids))
      cpu[k] = ((k === 'client' ? clientCpu : after[k]!.user + after[k]!.kernel) - before[k]!.user - before[k]!.kernel) / wall;
    const sharedAfter = coreTicks(this.sharedCores);
    const sharedBusy = this.pin ? (sharedAfter.busy - sharedBefore.busy) / (sharedAfter.total - sharedBefore.total) : NaN;
    const result = HAS_WRK ? parseWrk(out) : loadClientResult(out);
    const perRequestUs: Run['perRequestUs'] = {};
    for (const p of Object.keys(watch))
      perRequestUs[p] = {
        user: ((after[p]!.user - before[p]!.user) * 1e6) / (result.rps * wall),
        kernel: ((after[p]!.kernel - before[p]!.kernel) * 1e6) / (result.rps * wall),
      };
    return { ...result, cpu, sharedBusy, perRequestUs };
  }

  /**
   * What set the pace of these runs instead of the proxy, if anything: the upstream or
   * the client at (nearly) a whole core, or, pinned, the cores they share (nearly) full.
   * Empty when the proxy was the limit.
   */
  pacedBy(runs: Run[]): string[] {
    const most = (p: string): number => Math.max(...runs.map((r) => r.cpu[p] ?? NaN));
    const found = (['upstream', 'client'] as const).filter((p) => most(p) >= SATURATED) as string[];
    const shared = Math.max(...runs.map((r) => r.sharedBusy));
    if (this.pin && found.length === 0 && shared >= SATURATED)
      found.push(`core${this.sharedCores.length === 1 ? '' : 's'} ${this.otherCpus} (${pct(shared)} busy)`);
    return found;
  }

  /** The busiest the shared cores were over these runs, for the tables; empty unpinned. */
  sharedCoresCell(runs: Run[]): string {
    return this.pin ? `, ${pct(Math.max(...runs.map((r) => r.sharedBusy)))}` : '';
  }

  close(): void {
    rmSync(this.#work, { recursive: true, force: true });
  }
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export const spread = (xs: number[]): Spread => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
export const fmtRatio = (r: Spread): string => `${r.median.toFixed(2)}× (${r.min.toFixed(2)}–${r.max.toFixed(2)})`;
export const pct = (x: number): string => `${Math.round(x * 100)}%`;
export const round2 = (x: number): number => Number(x.toFixed(2));

/** A watched process's CPU per request in one run, user space and kernel together, in µs. */
export const cpuUs = (run: Run, p: string): number => run.perRequestUs[p]!.user + run.perRequestUs[p]!.kernel;

/** A process's median CPU per request over its runs: "72 + 25 µs" (user + kernel). */
export const perRequestCell = (runs: Run[], p: string): string =>
  `${median(runs.map((x) => x.perRequestUs[p]!.user)).toFixed(0)} + ${median(runs.map((x) => x.perRequestUs[p]!.kernel)).toFixed(0)} µs`;
