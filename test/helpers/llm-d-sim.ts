import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { freePort } from './peer-router.js';
import { peer } from './peers.js';

/**
 * llm-d-inference-sim, the real binary the peers tier builds (docs/peers.md), one
 * process per engine on loopback. It is run as llm-d's own end-to-end tests run it:
 * the stand-in tokenizer (no hub), a model name, KV events published to a ZMQ endpoint
 * the router binds, and `--log-http`, so each engine's own log says which requests it
 * was sent (a request's marker in its body), whatever the router claims.
 */
export interface LlmdSimOptions {
  /** Requests run at once (`--max-num-seqs`); more wait in its queue. */
  maxNumSeqs?: number;
  /** Waiting requests past which it answers 429 (`--max-waiting-queue-length`). */
  maxWaitingQueueLength?: number;
  /** Time per generated token, ms. */
  interTokenLatencyMs?: number;
  prefillOverheadMs?: number;
  prefillTimePerTokenMs?: number;
  blockSize?: number;
  kvCacheSize?: number;
  /** KV events as msgpack maps (vLLM's newer format) instead of positional arrays. */
  mapEvents?: boolean;
  extra?: readonly string[];
}

export interface LlmdSim {
  readonly url: string;
  /** Where its publisher connects: the router binds it (`--kv-events` with `bind: true`). */
  readonly zmqEndpoint: string;
  readonly child: ChildProcess;
  /** Its log so far (stderr and stdout). */
  log(): string;
  /** How many generation requests (chat or completions) it logged whose body holds `marker`. */
  received(marker: string): number;
  /** Stop it and start it again on the same ports: an engine restart (its cache and its batch numbers start over). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export function llmdSimArgs(port: number, zmqPort: number, o: LlmdSimOptions = {}): string[] {
  return [
    '--model',
    'tiny',
    '--port',
    String(port),
    '--force-dummy-tokenizer',
    '--max-num-seqs',
    String(o.maxNumSeqs ?? 4),
    '--max-waiting-queue-length',
    String(o.maxWaitingQueueLength ?? 1000),
    '--enable-kvcache',
    '--kv-cache-size',
    String(o.kvCacheSize ?? 1024),
    '--block-size',
    String(o.blockSize ?? 16),
    '--zmq-endpoint',
    `tcp://127.0.0.1:${zmqPort}`,
    '--latency-calculator',
    'per-token',
    '--prefill-overhead',
    `${o.prefillOverheadMs ?? 5}ms`,
    '--prefill-time-per-token',
    `${o.prefillTimePerTokenMs ?? 0.05}ms`,
    '--inter-token-latency',
    `${o.interTokenLatencyMs ?? 2}ms`,
    '--seed',
    '7',
    '--log-http',
    ...(o.mapEvents ? ['--use-vllm-map-event-format'] : []),
    ...(o.extra ?? []),
  ];
}

/** Start one engine; resolves once it answers /v1/models. */
export async function startLlmdSim(o: LlmdSimOptions = {}): Promise<LlmdSim> {
  const bin = peer('llm-d-inference-sim').paths.bin!;
  let log = '';
  const launch = (port: number, zmqPort: number): ChildProcess => {
    // POD_IP: its KV cache needs one (it names the event topic, kv@<ip>@<model>).
    const child = spawn(bin, llmdSimArgs(port, zmqPort, o), {
      env: { ...process.env, POD_IP: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    return child;
  };
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const zmqPort = await freePort();
    let child = launch(port, zmqPort);
    const url = `http://127.0.0.1:${port}`;
    if (!(await waitUp(url, child, 15_000))) {
      child.kill('SIGKILL');
      // A port found free can be taken before the engine binds it: try another.
      if (attempt < 3) continue;
      throw new Error(`llm-d-inference-sim did not start on ${url}: ${log.slice(-2000)}`);
    }
    return {
      url,
      zmqEndpoint: `tcp://127.0.0.1:${zmqPort}`,
      get child() {
        return child;
      },
      log: () => log,
      received: (marker) => countRequests(log, marker),
      async restart() {
        await stop(child);
        child = launch(port, zmqPort);
        if (!(await waitUp(url, child, 15_000))) throw new Error(`llm-d-inference-sim did not restart on ${url}: ${log.slice(-2000)}`);
      },
      close: () => stop(child),
    };
  }
}

export async function startLlmdSims(n: number, o: LlmdSimOptions = {}): Promise<LlmdSim[]> {
  return Promise.all(Array.from({ length: n }, () => startLlmdSim(o)));
}

/** `--kv-events` for these engines: each publisher connects to an endpoint the router binds. */
export function kvEventsFor(sims: readonly LlmdSim[]): string {
  return JSON.stringify(Object.fromEntries(sims.map((s) => [s.url, { endpoint: s.zmqEndpoint, bind: true }])));
}

async function waitUp(url: string, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) return false;
    try {
      const res = await fetch(`${url}/v1/models`);
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await gone;
  clearTimeout(timer);
}

/**
 * Requests in a `--log-http` log whose body holds the marker. Each request is logged as
 * an `"HTTP request" method="POST" …` entry followed by its headers and a ` > body="…"`
 * line with the body as a Go-quoted string.
 */
function countRequests(log: string, marker: string): number {
  let n = 0;
  const entries = log.split(/\n(?=[IWEF]\d{4} )/);
  for (const e of entries) if (/"HTTP request" method="POST" requestURI="\/v1\/(chat\/)?completions"/.test(e) && e.includes(marker)) n++;
  return n;
}
