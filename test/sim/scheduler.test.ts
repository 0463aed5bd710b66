import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sim/clock.js';
import { EngineCore } from '../../src/sim/engine-core.js';
import { DEFAULT_ENGINE_PARAMS } from '../../src/sim/engine-params.js';
import type { EngineParams } from '../../src/sim/engine-params.js';
import type { Flavor } from '../../src/sim/http/responses.js';
import type { SimRequest } from '../../src/sim/sim-request.js';

/**
 * The admission rules of each flavour's scheduler, on simulated time
 * (docs/simulator.md §Admission per flavour).
 */
const P = DEFAULT_ENGINE_PARAMS;

function engine(flavor: Flavor, overrides: Partial<EngineParams> = {}) {
  const clock = new ManualClock();
  const core = new EngineCore({ ...P, ...overrides }, clock, 1, 0, flavor);
  const tokens = new Map<SimRequest, number[]>();
  const submit = (prompt: number[], maxTokens = 4): SimRequest => {
    const at: number[] = [];
    const r = core.submit({ promptTokens: prompt, maxTokens, ignoreEos: true }, { onToken: (_p, _i, t) => at.push(t), onFinish() {} });
    if (!r.ok) throw new Error(r.reason);
    tokens.set(r.request, at);
    return r.request;
  };
  return { clock, core, submit, tokens };
}

/** n tokens no other prompt of another tag shares, not even the first block. */
const unique = (tag: number, n: number, from = 0): number[] => Array.from({ length: n }, (_, k) => 1_000_000 * (tag + 1) + from + k);

const overhead = (len: number): number => P.alpha0Ms + P.alpha1Ms * len;
const prefillStep = (tokens: number): number => P.beta0Ms + P.beta1Ms * tokens;

describe('SGLang flavour: the prefill batch under max_prefill_tokens and chunked_prefill_size', () => {
  it('8 requests of 12K uncached tokens arriving together: 7 wait after the first step, one is chunked', () => {
    const { clock, core, submit, tokens } = engine('sglang');
    const reqs = Array.from({ length: 8 }, (_, i) => submit(unique(i, 12_288)));
    const firstStepStart = overhead(12_288);
    clock.advance(firstStepStart + 1);
    // Step 1 computes 8,192 tokens of the first request: it is the chunked request,
    // counted neither running nor waiting (as SGLang), its rest in the uncached tokens.
    let l = core.load();
    expect(l.waiting).toBe(7);
    expect(l.running).toBe(0);
    expect(l.waitingUncachedTokens).toBe(7 * 12_288 + (12_288 - 8_192));
    expect(reqs[0]!.state).toBe('running');
    expect(reqs.slice(1).every((r) => r.state === 'waiting')).toBe(true);

    // Step 2 finishes the chunked request (4,096 tokens). The next request needs 12,288
    // tokens, not less than the 12,288 left of max_prefill_tokens: it waits.
    const secondStepStart = firstStepStart + prefillStep(8_192);
    clock.advance(secondStepStart + 1 - clock.now());
    l = core.load();
    expect(l.waiting).toBe(7);
    expect(l.running).toBe(1);
    expect(reqs[0]!.prefillRemaining - reqs[0]!.stepChunk).toBe(0);
    clock.advance(secondStepStart + prefillStep(4_096) - clock.now());
    expect(reqs[0]!.ttftMs).toBeCloseTo(secondStepStart + prefillStep(4_096), 6);
    expect(core.load().waiting).toBe(6); // step 3 chunks the second request

    clock.runUntilIdle();
    // Prefill goes first: the first request decodes its second token only when no
    // prefill batch can be formed, i.e. once every other prompt is in.
    const first = tokens.get(reqs[0]!)!;
    const lastTtft = Math.max(...reqs.map((r) => r.firstTokenAt));
    expect(first[1]!).toBeGreaterThan(lastTtft);
    expect(core.cache.usedBlocks()).toBe(0);
  });

  it('a short request joins the chunked request in its last chunk', () => {
    const { clock, submit } = engine('sglang');
    const long = submit(unique(0, 12_288));
    const short = submit(unique(1, 1_000));
    clock.runUntilIdle();
    // Step 1: 8,192 of the long one. Step 2: its last 4,096 plus the whole short one.
    const step1End = overhead(12_288) + prefillStep(8_192);
    expect(long.ttftMs).toBeCloseTo(step1End + prefillStep(4_096 + 1_000), 6);
    expect(short.firstTokenAt).toBe(long.firstTokenAt);
  });

  it('only one chunked request at a time: the chunked one continues first and takes the whole chunk', () => {
    const { clock, core, submit } = engine('sglang', { chunkedPrefillSize: 4_096 });
    const a = submit(unique(0, 10_000));
    const b = submit(unique(1, 10_000));
    clock.advance(overhead(10_000) + 1);
    expect(a.stepChunk).toBe(4_096);
    expect(b.state).toBe('waiting');
    clock.advance(prefillStep(4_096));
    // Second step: a again, the whole budget; b still waits.
    expect(a.stepChunk).toBe(4_096);
    expect(b.state).toBe('waiting');
    expect(core.load().running).toBe(0);
    clock.runUntilIdle();
    expect(b.admittedAt).toBeGreaterThan(a.admittedAt);
  });

  it('with chunking off, max_prefill_tokens bounds the batch, but the first request always fits', () => {
    const { clock, core, submit } = engine('sglang', { chunkedPrefillSize: -1 });
    const reqs = Array.from({ length: 4 }, (_, i) => submit(unique(i, 6_000)));
    clock.advance(overhead(6_000) + 1);
    // 6,000 + 6,000 leave 4,384 of 16,384: the third does not fit in this batch.
    expect(reqs.map((r) => r.state)).toEqual(['running', 'running', 'waiting', 'waiting']);
    expect(core.load().running).toBe(2);
    clock.runUntilIdle();

    const big = engine('sglang', { chunkedPrefillSize: -1 });
    const r = big.submit(unique(9, 20_000));
    big.clock.runUntilIdle();
    expect(r.ttftMs).toBeCloseTo(overhead(20_000) + prefillStep(20_000), 6);
  });

  it('counts the chunked request against max_running_requests', () => {
    const { clock, core, submit } = engine('sglang', { maxRunning: 2 });
    submit(unique(0, 100), 200);
    const chunked = submit(unique(1, 20_000));
    const third = submit(unique(2, 100));
    // The long prompt reaches the scheduler after its arrival overhead, at a step boundary.
    clock.advance(overhead(20_000) + P.beta0Ms + P.beta2Ms + 1);
    expect(chunked.state).toBe('running');
    expect(chunked.prefillRemaining).toBe(20_000);
    expect(core.load().running).toBe(1);
    expect(third.state).toBe('waiting');
  });
});

describe('vLLM flavour: running first, then waiting, under max_num_batched_tokens', () => {
  it('8 requests of 12K: one runs after the first step, and the second takes the budget the first leaves', () => {
    const { clock, core, submit, tokens } = engine('vllm');
    const reqs = Array.from({ length: 8 }, (_, i) => submit(unique(i, 12_288)));
    const firstStepStart = overhead(12_288);
    clock.advance(firstStepStart + 1);
    let l = core.load();
    expect(l.waiting).toBe(7);
    expect(l.running).toBe(1); // vLLM counts a partly prefilled request as running
    expect(reqs[0]!.stepChunk).toBe(8_192);

    // Step 2: the first request's last 4,096 tokens, then 4,096 of the second.
    clock.advance(prefillStep(8_192));
    l = core.load();
    expect(l.waiting).toBe(6);
    expect(l.running).toBe(2);
    expect(reqs[0]!.stepChunk).toBe(4_096);
    expect(reqs[1]!.stepChunk).toBe(4_096);

    // Step 3: the first request decodes (1 token of budget) alongside 8,191 prefill tokens.
    const step3Start = firstStepStart + 2 * prefillStep(8_192);
    clock.advance(step3Start + 1 - clock.now());
    expect(reqs[0]!.decodingThisStep).toBe(true);
    expect(reqs[1]!.stepChunk).toBe(8_191);
    clock.runUntilIdle();
    const first = tokens.get(reqs[0]!)!;
    expect(first[1]! - first[0]!).toBeCloseTo(P.beta0Ms + P.beta1Ms * 8_191 + P.beta2Ms, 6);
    expect(core.cache.usedBlocks()).toBe(0);
  });

  it('long_prefill_token_threshold caps one request per step, leaving budget for the next', () => {
    const { clock, submit } = engine('vllm', { longPrefillTokenThreshold: 2_048 });
    const a = submit(unique(0, 12_288));
    const b = submit(unique(1, 3_000));
    clock.advance(overhead(12_288) + 1);
    expect(a.stepChunk).toBe(2_048);
    expect(b.stepChunk).toBe(2_048);
    clock.runUntilIdle();
    // Six steps of 2,048 for a; b's 3,000 ride along in the first two, then b decodes
    // its remaining three tokens in steps 3 to 5.
    expect(a.ttftMs).toBeCloseTo(overhead(12_288) + 6 * P.beta0Ms + (12_288 + 3_000) * P.beta1Ms + P.beta2Ms * 3, 6);
  });

  it('max_num_seqs stops admission even with budget left', () => {
    const { clock, core, submit } = engine('vllm', { maxRunning: 3 });
    for (let i = 0; i < 5; i++) submit(unique(i, 100));
    clock.advance(overhead(100) + 1);
    expect(core.load()).toMatchObject({ running: 3, waiting: 2 });
  });
});

describe('KV memory as the engines report it', () => {
  it('num_used_tokens counts allocated KV, not the reservation for the output still to come', () => {
    const { clock, core, submit } = engine('sglang');
    const r = submit(unique(0, 160), 100);
    clock.advance(overhead(160) + 0.5);
    expect(r.stepChunk).toBe(160);
    expect(core.load().usedTokens).toBe(160);
    for (let i = 0; i < 20; i++) clock.advance(P.beta0Ms + P.beta2Ms);
    clock.advance(prefillStep(160));
    const out = r.output.length;
    expect(out).toBeGreaterThan(15);
    expect(core.load().usedTokens).toBe(Math.ceil((160 + out) / 16) * 16);
    expect(core.cache.usedBlocks()).toBe(Math.ceil((160 + 100) / 16));
  });

  it('a full KV pool shows: num_total_tokens plus a new prompt exceeds max_total_num_tokens', () => {
    const { clock, core, submit } = engine('sglang', { kvBlocks: 100 });
    const a = submit(unique(0, 600), 100);
    const b = submit(unique(1, 600), 100);
    const c = submit(unique(2, 600), 100);
    clock.advance(overhead(600) + prefillStep(1_200) + 1);
    expect([a.state, b.state, c.state]).toEqual(['running', 'running', 'waiting']);
    const l = core.load();
    expect(l.maxTotalTokens).toBe(1_600);
    expect(l.usedTokens).toBeGreaterThanOrEqual(1_200);
    expect(l.totalTokens).toBe(l.usedTokens + 600);
    expect(l.totalTokens + 600).toBeGreaterThan(l.maxTotalTokens);
    clock.runUntilIdle();
    expect(c.state).toBe('finished');
  });
});

describe('SGLang --schedule-policy', () => {
  /** One slot busy with a long decode while later requests queue behind it. */
  function scenario(policy: 'fcfs' | 'lpm', maxRunning: number) {
    const e = engine('sglang', { schedulePolicy: policy, maxRunning });
    const shared = unique(7, 640);
    e.submit(shared, 1);
    e.clock.runUntilIdle(); // 40 blocks of `shared` are now cached
    e.submit(unique(8, 32), 60); // occupies a slot for 60 decode steps
    e.clock.advance(50);
    return { ...e, shared };
  }

  it('lpm admits the longest cached prefix first and reports uncached tokens net of the cache; fcfs keeps arrival order and raw lengths', () => {
    for (const policy of ['fcfs', 'lpm'] as const) {
      const { clock, core, submit, shared } = scenario(policy, 1);
      const cold = submit(unique(9, 640));
      const warm = submit([...shared, ...unique(10, 64)]);
      clock.advance(2 * (P.beta0Ms + P.beta2Ms));
      const l = core.load();
      expect(l.waiting).toBe(2);
      expect(l.waitingTokens).toBe(640 + 704);
      expect(l.waitingUncachedTokens).toBe(policy === 'lpm' ? 640 + 64 : 640 + 704);
      clock.runUntilIdle();
      if (policy === 'lpm') expect(warm.admittedAt).toBeLessThan(cold.admittedAt);
      else expect(cold.admittedAt).toBeLessThan(warm.admittedAt);
      expect(warm.cachedTokens).toBe(640);
    }
  });

  it('lpm holds back a request that shares an uncached prefix with one ahead of it, so it hits the cache later', () => {
    const result: Record<string, { d2Cached: number; eBeforeD2: boolean }> = {};
    for (const policy of ['fcfs', 'lpm'] as const) {
      const { clock, submit } = scenario(policy, 3);
      const prefix = unique(11, 64);
      const d1 = submit([...prefix, ...unique(12, 200)]);
      const d2 = submit([...prefix, ...unique(13, 200)]);
      const e = submit(unique(14, 200));
      clock.runUntilIdle();
      expect(d1.state).toBe('finished');
      result[policy] = { d2Cached: d2.cachedTokens, eBeforeD2: e.admittedAt < d2.admittedAt };
    }
    expect(result.fcfs).toEqual({ d2Cached: 0, eBeforeD2: false });
    expect(result.lpm).toEqual({ d2Cached: 64, eBeforeD2: true });
  });

  it('lpm falls back to arrival order on a queue longer than 128', () => {
    const { clock, submit, shared } = scenario('lpm', 1);
    const cold = Array.from({ length: 129 }, (_, i) => submit(unique(100 + i, 20), 1));
    const warm = submit([...shared, ...unique(99, 16)], 1);
    clock.runUntilIdle();
    expect(warm.admittedAt).toBeGreaterThan(cold[0]!.admittedAt);
  });
});

describe('determinism', () => {
  it.each(['sglang', 'vllm'] as const)('%s: the same arrivals give the same timeline', (flavor) => {
    const run = () => {
      const e = engine(flavor, { maxRunning: 4, kvBlocks: 2_000 });
      const reqs = Array.from({ length: 12 }, (_, i) => e.submit(unique(i % 5, 1_500 + 700 * i), 30));
      e.clock.runUntilIdle();
      return reqs.map((r) => [r.admittedAt, ...e.tokens.get(r)!]);
    };
    expect(run()).toEqual(run());
  });
});
