import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import type { EngineParams, Flavor } from '../../src/sim/index.js';
import { runTraceVirtual } from '../../src/virtual/index.js';
import type { VirtualTraceRunResult } from '../../src/virtual/index.js';
import { conversationTrace, SMALL_CONVERSATIONS } from '../../src/workload/index.js';

/**
 * The differential check of the replay's speed work (BENCHMARKS.md, section 10, Speed): a seeded
 * trace's whole run, every request's TTFT (ttftMsByRequest) and ITL, its decisions,
 * cached tokens and refusals, must stay what it was before the work, exactly. Each
 * fingerprint is a hash of the run as JSON (shortest round-trip form of every number),
 * recorded from the code before the change; a change of any single TTFT changes it.
 * The cases evict from the engines' KV caches and from a small router prefix index.
 */
interface Case {
  config: Partial<RouterConfig>;
  engine: Partial<EngineParams>;
  flavor?: Flavor;
  prefixSource?: 'requests' | 'events';
  fingerprint: string;
}

const cases: Case[] = [
  { config: {}, engine: { kvBlocks: 1024, maxRunning: 8 }, fingerprint: '6b5cd18ac14b20df9d8d31be' },
  { config: { policy: 'round_robin' }, engine: { kvBlocks: 1024, maxRunning: 8 }, fingerprint: 'e95d4e98a7cc316d1e281ef4' },
  { config: { workerQueueLimit: 2 }, engine: { kvBlocks: 800, maxRunning: 6 }, fingerprint: '78fed1cafea2f9fee925ce2b' },
  { config: { prefixIndexMaxBlocks: 500 }, engine: { kvBlocks: 700, maxRunning: 8 }, fingerprint: 'dd0e5a0409a17533b6bcb0bc' },
  {
    config: { prefixIndexMaxBlocks: 2000, blockSize: 32 },
    engine: { kvBlocks: 1500, maxRunning: 8, schedulePolicy: 'lpm' },
    fingerprint: '1a8f9598d48d428537def935',
  },
  {
    config: { prefixIndexMaxBlocks: 800 },
    engine: { kvBlocks: 900, maxRunning: 8, blockSize: 32 },
    flavor: 'vllm',
    fingerprint: '6126702062106ed293a1f601',
  },
  {
    config: { prefixIndexMaxBlocks: 800 },
    engine: { kvBlocks: 1024, maxRunning: 8 },
    prefixSource: 'events',
    fingerprint: 'd572c28b7dd1de5ff5ce6411',
  },
];

function fingerprint(r: VirtualTraceRunResult): string {
  const byRequest = Array.from(r.ttftMsByRequest, (t) => (Number.isNaN(t) ? 'NaN' : t));
  return (
    createHash('sha256')
      // `shed` came later, and is 0 without --admission slo: the run it fingerprints is the same run.
      .update(
        JSON.stringify({
          ...r,
          ttftMsByRequest: byRequest,
          learnedPrefill: undefined,
          shed: r.shed === 0 ? undefined : r.shed,
          shedByRequest: r.shed === 0 ? undefined : Array.from(r.shedByRequest),
        }),
      )
      .digest('hex')
      .slice(0, 24)
  );
}

describe('the virtual replay, request by request, as before the speed work', () => {
  const trace = conversationTrace({ requests: 600, rate: 60, ...SMALL_CONVERSATIONS, seed: 11 });
  it.each(cases.map((c) => [JSON.stringify({ ...c, fingerprint: undefined }), c] as const))('%s', (_name, c) => {
    const r = runTraceVirtual({
      config: { ...defaultConfig(), ...c.config },
      workers: 4,
      engine: c.engine,
      flavor: c.flavor,
      seed: 3,
      trace,
      traceBlockSize: 64,
      prefixSource: c.prefixSource,
    });
    expect(r.finished).toBe(trace.length);
    expect(fingerprint(r)).toBe(c.fingerprint);
  });
});
