/**
 * A fleet of llm-d-inference-sim engines, the peers tier's pinned binary
 * (docs/peers.md §llm-d-inference-sim), one process per engine on loopback, for the
 * benchmarks that run beside a simulator routerctl did not write. Its per-request model
 * is set by the caller (per-token latency calculator); the stand-in tokenizer keeps it
 * off the hub.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort, peersTierPath } from '../../src/bench/index.js';
import { stopProcess } from './processes.js';

export const LLMD_SIM_BIN = peersTierPath('bin', 'llm-d-inference-sim');

export interface LlmdFleetOptions {
  readonly engines: number;
  readonly maxNumSeqs: number;
  readonly maxWaiting: number;
  readonly kvBlocks: number;
  readonly prefillOverhead: string;
  readonly prefillPerToken: string;
  readonly interToken: string;
  /** Each engine's KV events: its publisher connects to this endpoint, which the router must bind. */
  readonly kvEvents?: boolean;
}

export interface LlmdFleet {
  readonly urls: string[];
  /** With kvEvents: each engine's endpoint by URL, as `serve --kv-events` takes them (bind: the router binds). */
  readonly kvEventsJson: string | undefined;
  stop(): Promise<void>;
}

async function waitUp(url: string): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/v1/models`)).ok) return;
    } catch {
      // not yet
    }
    if (Date.now() > until) throw new Error(`${url} did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startLlmdFleet(o: LlmdFleetOptions): Promise<LlmdFleet> {
  if (!existsSync(LLMD_SIM_BIN)) throw new Error('llm-d-inference-sim is not installed: npm run peers -- install llm-d-inference-sim');
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  const events: Record<string, { endpoint: string; bind: true }> = {};
  for (let i = 0; i < o.engines; i++) {
    const port = await freePort();
    const zmq = o.kvEvents ? await freePort() : undefined;
    const args = [
      ...['--model', 'tiny', '--port', String(port), '--force-dummy-tokenizer', '--max-model-len', '32768'],
      ...['--max-num-seqs', String(o.maxNumSeqs), '--max-waiting-queue-length', String(o.maxWaiting)],
      ...['--enable-kvcache', '--kv-cache-size', String(o.kvBlocks), '--block-size', '16'],
      ...['--latency-calculator', 'per-token', '--prefill-overhead', o.prefillOverhead, '--prefill-time-per-token', o.prefillPerToken],
      ...['--inter-token-latency', o.interToken, '--seed', '7'],
      ...(zmq !== undefined ? ['--zmq-endpoint', `tcp://127.0.0.1:${zmq}`] : []),
    ];
    // POD_IP: its KV cache needs one (it names the event topic).
    children.push(spawn(LLMD_SIM_BIN, args, { stdio: 'ignore', env: { ...process.env, POD_IP: '127.0.0.1' } }));
    const url = `http://127.0.0.1:${port}`;
    urls.push(url);
    if (zmq !== undefined) events[url] = { endpoint: `tcp://127.0.0.1:${zmq}`, bind: true };
  }
  await Promise.all(urls.map(waitUp));
  return {
    urls,
    kvEventsJson: o.kvEvents ? JSON.stringify(events) : undefined,
    stop: async () => void (await Promise.all(children.map((c) => stopProcess(c)))),
  };
}
