import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import type { EngineParams, Flavor } from '../../src/sim/index.js';
import { runTraceVirtual } from '../../src/virtual/index.js';
import { conversationTrace, parseMooncakeTrace, selectTrace } from '../../src/workload/index.js';
import type { TraceRequest } from '../../src/workload/index.js';

/**
 * The differential check of the fast replay: keying prompts from the trace's hash ids
 * (no token arrays) and keying them from their tokens must give the same run, request
 * by request: the same decisions, cached tokens, refusals, and every TTFT and ITL.
 */
const conversations = (seed: number, o: { block: number; rate: number; output: number }): TraceRequest[] =>
  conversationTrace({
    requests: 300,
    rate: o.rate,
    blockSize: o.block,
    apps: 3,
    systemTokens: 8 * o.block,
    sessions: 20,
    turnTokens: 3 * o.block,
    outputTokens: o.output,
    maxContextTokens: 40 * o.block,
    seed,
  });

/** Shared prefixes with tails of their own, some requests the same prompt again: perf/trace-virtual.ts's shape, small. */
function sharedPrefixTrace(seed: number, n: number): TraceRequest[] {
  let s = seed;
  const rnd = (): number => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const lines: string[] = [];
  let t = 0;
  let own = 100_000;
  for (let k = 0; k < n; k++) {
    t += -Math.log(1 - rnd()) * 20;
    const g = Math.floor(rnd() ** 2 * 6);
    const again = rnd() < 0.2;
    const ids = [g * 10, g * 10 + 1, ...(again ? [g * 10 + 2] : Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => own++))];
    lines.push(
      JSON.stringify({
        timestamp: Math.round(t),
        input_length: (ids.length - 1) * 128 + 1 + Math.floor(rnd() * 127),
        output_length: 1 + Math.floor(rnd() * 60),
        hash_ids: ids,
      }),
    );
  }
  return selectTrace(parseMooncakeTrace(lines.join('\n'), 128).requests, {});
}

interface Case {
  name: string;
  trace: readonly TraceRequest[];
  traceBlockSize: number;
  config: Partial<RouterConfig>;
  engine: Partial<EngineParams>;
  flavor?: Flavor;
  workers?: number;
  prefixSource?: 'requests' | 'events';
}

const cases: Case[] = [];
for (const seed of [1, 2]) {
  const busy = conversations(seed, { block: 64, rate: 150, output: 40 });
  for (const config of [{ policy: 'round_robin' }, {}, { workerQueueLimit: 2 }] as Partial<RouterConfig>[]) {
    cases.push({
      name: `seed ${seed}, conversations past saturation, KV tight, ${JSON.stringify(config)}`,
      trace: busy,
      traceBlockSize: 64,
      config,
      engine: { kvBlocks: 600, maxRunning: 4 },
    });
  }
  cases.push({
    name: `seed ${seed}, router blocks of 32 over engine blocks of 16, lpm`,
    trace: conversations(seed, { block: 128, rate: 12, output: 20 }),
    traceBlockSize: 128,
    config: { blockSize: 32 },
    engine: { kvBlocks: 2048, maxRunning: 8, schedulePolicy: 'lpm' },
  });
  cases.push({
    name: `seed ${seed}, vLLM engines with blocks of 32`,
    trace: conversations(seed, { block: 64, rate: 20, output: 30 }),
    traceBlockSize: 64,
    config: { blockSize: 32 },
    engine: { kvBlocks: 700, maxRunning: 8, blockSize: 32 },
    flavor: 'vllm',
  });
  cases.push({
    name: `seed ${seed}, shared prefixes and repeated prompts, KV tight`,
    trace: sharedPrefixTrace(seed, 400),
    traceBlockSize: 128,
    config: {},
    engine: { kvBlocks: 300, maxRunning: 6 },
  });
  cases.push({
    name: `seed ${seed}, an events-fed index`,
    trace: conversations(seed, { block: 64, rate: 20, output: 40 }),
    traceBlockSize: 64,
    config: {},
    engine: { kvBlocks: 1024, maxRunning: 8 },
    prefixSource: 'events',
  });
}

describe('trace keying: from the hash ids, or from the tokens', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s: the same run', (_name, c) => {
    const run = (keying: 'trace-ids' | 'tokens') =>
      runTraceVirtual({
        config: { ...defaultConfig(), ...c.config },
        workers: c.workers ?? 4,
        engine: c.engine,
        flavor: c.flavor,
        seed: 7,
        trace: c.trace,
        traceBlockSize: c.traceBlockSize,
        prefixSource: c.prefixSource,
        keying,
      });
    const byIds = run('trace-ids');
    const byTokens = run('tokens');
    expect(byIds.cachedTokens).toBeGreaterThan(0);
    expect(byIds.finished).toBeGreaterThan(0);
    expect(byIds).toEqual(byTokens);
  });

  it('falls back to tokens when a block size does not divide the trace block', () => {
    const trace = conversations(3, { block: 64, rate: 10, output: 20 });
    const run = (keying: 'trace-ids' | 'tokens') =>
      runTraceVirtual({
        config: { ...defaultConfig(), blockSize: 24 },
        workers: 3,
        engine: { kvBlocks: 1024 },
        seed: 1,
        trace,
        traceBlockSize: 64,
        keying,
      });
    expect(run('trace-ids')).toEqual(run('tokens'));
  });
});
