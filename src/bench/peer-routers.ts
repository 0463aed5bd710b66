import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The routers an operator would pick instead of routerctl (docs/peers.md §Peer routers):
 * how each is started in front of a fleet with its maintainers' recommended settings,
 * and what keeps it on this machine. `bench compare --peer`, the peer tests
 * (test/peers/peer-routers.test.ts) and the benchmarks (perf/peer-routers.ts,
 * perf/peer-fleet.ts) start them through here alone. The program is the peers tier's
 * (`ROUTERCTL_PEERS_DIR`, else `.peers/` of this checkout), else the one on the PATH.
 */
export type PeerRouterName = 'smg' | 'vllm-router';

export const PEER_ROUTER_NAMES: readonly PeerRouterName[] = ['smg', 'vllm-router'];

/** The repository's root, from the source (vitest) or from dist/ alike: the nearest folder up with the lockfile. */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package-lock.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}
const ROOT = repoRoot();
const PEERS_DIR = process.env.ROUTERCTL_PEERS_DIR ? path.resolve(process.env.ROUTERCTL_PEERS_DIR) : path.join(ROOT, '.peers');

/** A path inside the peers tier (`ROUTERCTL_PEERS_DIR`, else `.peers/` of this checkout): where a benchmark finds AIPerf and the tiny model. */
export function peersTierPath(...parts: string[]): string {
  return path.join(PEERS_DIR, ...parts);
}

export interface PeerRouterOptions {
  readonly workerUrls: readonly string[];
  /** `cache_aware` (both routers' default) unless said. */
  readonly policy?: string;
  /** More flags, after the ones below (a later flag wins in both routers' parsers). */
  readonly extra?: readonly string[];
  /** A taskset core list to pin it to. */
  readonly cpus?: string;
  /** How long to wait for every worker to be ready. */
  readonly readyTimeoutMs?: number;
}

export interface RunningPeerRouter {
  readonly name: PeerRouterName;
  /** The peers tier's pinned version, or "from the PATH". */
  readonly version: string;
  /** The serving port: the OpenAI routes. */
  readonly url: string;
  /** Its Prometheus port (both serve /metrics apart from the serving port). */
  readonly metricsUrl: string;
  /** The whole command line it was started with. */
  readonly argv: readonly string[];
  readonly child: ChildProcess;
  /** What it printed (stdout and stderr), for a failure's message. */
  output(): string;
  close(): Promise<void>;
}

interface Spec {
  /** The version the peers tier pins (docs/peers.md), which the tests and benchmarks require. */
  readonly version: string;
  /** Where the peers tier puts its program. */
  readonly bin: string;
  /** Its name on the PATH, where pip puts it. */
  readonly command: string;
  /**
   * Its command line. Both are Rust binaries reached through a Python launcher; neither
   * is told to reach off the machine. SMG would load a tokenizer from the hub for the
   * served model, so `--disable-tokenizer-autoload` (its cache_aware then matches on
   * text, as its docs describe for a router without a tokenizer). The vLLM router
   * checks its workers every 30 s at start by default; 1 s lets it start in a second.
   */
  args(o: PeerRouterOptions, port: number, metricsPort: number): string[];
}

const SPECS: Record<PeerRouterName, Spec> = {
  smg: {
    version: '1.13.0',
    bin: path.join(PEERS_DIR, 'smg', 'bin', 'smg'),
    command: 'smg',
    args: (o, port, metricsPort) => [
      'launch',
      ...['--worker-urls', ...o.workerUrls],
      ...['--policy', o.policy ?? 'cache_aware'],
      ...['--host', '127.0.0.1', '--port', String(port)],
      ...['--prometheus-host', '127.0.0.1', '--prometheus-port', String(metricsPort)],
      '--disable-tokenizer-autoload',
      ...(o.extra ?? []),
    ],
  },
  'vllm-router': {
    version: '0.1.17',
    bin: path.join(PEERS_DIR, 'vllm-router', 'bin', 'vllm-router'),
    command: 'vllm-router',
    args: (o, port, metricsPort) => [
      ...['--worker-urls', ...o.workerUrls],
      ...['--policy', o.policy ?? 'cache_aware'],
      ...['--host', '127.0.0.1', '--port', String(port)],
      ...['--prometheus-host', '127.0.0.1', '--prometheus-port', String(metricsPort)],
      ...['--worker-startup-check-interval', '1'],
      ...(o.extra ?? []),
    ],
  },
};

/** The version the peers tier pins. */
export function peerRouterVersion(name: PeerRouterName): string {
  return SPECS[name].version;
}

/** The peers tier's program when it is installed, else the one on the PATH; undefined when neither is there. */
export function peerRouterProgram(name: PeerRouterName): string | undefined {
  const s = SPECS[name];
  if (existsSync(s.bin)) return s.bin;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const f = path.join(dir, s.command);
    if (dir !== '' && existsSync(f)) return f;
  }
  return undefined;
}

/** Whether a name is a peer router's. */
export function isPeerRouterName(name: string): name is PeerRouterName {
  return (PEER_ROUTER_NAMES as readonly string[]).includes(name);
}

/** Why the peers tier's pinned program is not here (with the command that installs it), or null: what the tests and benchmarks require. */
export function peerRouterMissing(name: PeerRouterName): string | null {
  const s = SPECS[name];
  if (!existsSync(s.bin)) return `${name} is not installed: npm run peers -- install ${name}`;
  const installed = installedVersion(name);
  if (installed !== s.version)
    return `${name} is at ${installed ?? 'an unknown version'}, pinned at ${s.version}: npm run peers -- install ${name}`;
  return null;
}

function installedVersion(name: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(path.join(PEERS_DIR, 'installed.json'), 'utf8')) as Record<string, { version?: string }>)[name]
      ?.version;
  } catch {
    return undefined;
  }
}

/** A TCP port free on 127.0.0.1 now: both routers take a port number, not 0. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * Start one in front of `workerUrls`, and resolve once its `/readiness` counts every
 * worker healthy (both routers serve it: `{"healthy_workers": n, "total_workers": n}`).
 */
export async function startPeerRouter(name: PeerRouterName, o: PeerRouterOptions): Promise<RunningPeerRouter> {
  const spec = SPECS[name];
  const bin = peerRouterProgram(name);
  if (bin === undefined) throw new Error(`${name} is not installed: npm run peers -- install ${name} (or pip install ${spec.command})`);
  const [port, metricsPort] = [await freePort(), await freePort()];
  const args = spec.args(o, port, metricsPort);
  const [file, argv] = o.cpus === undefined ? [bin, args] : ['taskset', ['-c', o.cpus, bin, ...args]];
  // Its Python launcher must not read a user's site or config; the Rust side logs plainly.
  const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', PYTHONNOUSERSITE: '1' } });
  let out = '';
  const keep = (c: Buffer): void => {
    out = (out + c.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const running: RunningPeerRouter = {
    name,
    version: bin === spec.bin ? spec.version : 'from the PATH',
    url,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    argv: [bin, ...args],
    child,
    output: () => out,
    close: () => stop(child),
  };
  const until = Date.now() + (o.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}): ${tail(out)}`);
    if (await ready(url, o.workerUrls.length)) return running;
    if (Date.now() > until) {
      await stop(child);
      throw new Error(`${name} did not count ${o.workerUrls.length} healthy workers in time: ${tail(out)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function ready(url: string, workers: number): Promise<boolean> {
  try {
    const res = await fetch(`${url}/readiness`, { signal: AbortSignal.timeout(1000) });
    if (res.status !== 200) return false;
    const body = (await res.json()) as { healthy_workers?: number };
    return body.healthy_workers === workers;
  } catch {
    return false;
  }
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function tail(s: string): string {
  return s.trim().split('\n').slice(-5).join(' | ');
}
