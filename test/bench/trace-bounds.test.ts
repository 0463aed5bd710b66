import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTraceBench } from '../../src/bench/index.js';
import type { TraceBenchOptions } from '../../src/bench/index.js';
import { toMooncakeJsonl } from '../../src/workload/index.js';
import type { TraceRequest } from '../../src/workload/index.js';

/**
 * What a trace report states besides its arms (docs/bench.md §Trace report): the
 * infinite-cache ceiling of the slice, each arm's cached tokens as a share of it, the
 * shared-LRU reference point, the requests over the context, and refusals by reason.
 * Synthetic traces whose ceilings are known by hand.
 */
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'routerctl-bounds-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function bench(
  trace: TraceRequest[],
  o: Partial<TraceBenchOptions>,
  blockSize = 16,
): Promise<{ out: string; notes: string[]; code: number }> {
  const file = path.join(dir, `t${Math.random().toString(36).slice(2)}.jsonl`);
  await writeFile(file, toMooncakeJsonl(trace));
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const notes: string[] = [];
  const code = await runTraceBench(
    {
      file,
      traceBlockSize: blockSize,
      speedup: 1,
      limit: undefined,
      window: undefined,
      compare: [],
      sweep: [],
      routerArgs: '',
      workers: 1,
      kvBlocks: 1024,
      maxRunning: 8,
      contextLength: 131_072,
      seed: 7,
      sloTtftMs: 2000,
      json: true,
      clock: 'virtual',
      simSpeedup: 1,
      timeoutMs: 10_000,
      note: (line) => notes.push(line),
      ...o,
    },
    sink,
  );
  return { out, notes, code };
}

interface Report {
  trace: {
    ceiling: { input_tokens: number; cached_tokens: number; cached_token_share: number; repeated_reference_share: number };
    shared_lru: { capacity_blocks: number; cached_tokens: number };
    over_context: number;
  };
  fleet: { context_length: number };
  runs: Array<{
    label: string;
    finished: number;
    refused: number;
    refused_by: { context_length: number; kv_capacity: number; queue_full: number };
    cached_tokens: number;
    ceiling_share: number | null;
  }>;
}

// Blocks of 16 tokens, the engines' own block. One request a second, so each finishes before the next arrives.
//  1: [1,2] 32 tokens, nothing before it;
//  2: [1,2,3] 48 tokens: its two leading blocks were seen as that prefix: 32 cached;
//  3: [1,2] 32 tokens: two blocks seen, but the engine always computes the last token: 16 cached;
//  4: [9] 16 tokens: new.
// Ceiling 48 of 128 prompt tokens (37.5 %); 4 of 8 block references repeat (50 %).
const KNOWN: TraceRequest[] = [
  { atMs: 0, inputLength: 32, outputLength: 4, hashIds: [1, 2] },
  { atMs: 1000, inputLength: 48, outputLength: 4, hashIds: [1, 2, 3] },
  { atMs: 2000, inputLength: 32, outputLength: 4, hashIds: [1, 2] },
  { atMs: 3000, inputLength: 16, outputLength: 4, hashIds: [9] },
];

describe('the cache ceiling in a trace report', () => {
  it('is exact on a trace whose ceiling is known, and one engine with KV to spare reaches all of it', async () => {
    const { out, code } = await bench(KNOWN, { compare: ['', '--policy round_robin'] });
    expect(code).toBe(0);
    const r = JSON.parse(out) as Report;
    expect(r.trace.ceiling).toMatchObject({
      input_tokens: 128,
      cached_tokens: 48,
      cached_token_share: 0.375,
      repeated_reference_share: 0.5,
    });
    // The fleet's KV (1 × 1,024 blocks of 16) as one LRU holds the whole trace: the reference point is the ceiling here.
    expect(r.trace.shared_lru).toEqual({ capacity_blocks: 1024, cached_tokens: 48, cached_token_share: 0.375 });
    for (const a of r.runs) {
      expect(a.cached_tokens).toBe(48);
      expect(a.ceiling_share).toBe(1);
    }
  });

  it('shows each arm against it: two engines under round robin reach a share of it that cache_aware passes', async () => {
    // Two prefixes, alternating: round robin sends each prefix to both engines, cache_aware keeps each on one.
    const trace: TraceRequest[] = Array.from({ length: 8 }, (_, i) => ({
      atMs: i * 1000,
      inputLength: 64,
      outputLength: 4,
      hashIds: [100 * (Math.floor(i / 2) % 2), 100 * (Math.floor(i / 2) % 2) + 1, 1000 + i, 2000 + i],
    }));
    // Per prefix: the first of its 4 requests caches nothing, the other 3 find 32 tokens: 2 × 3 × 32 = 192 of 512.
    const { out } = await bench(trace, { compare: ['', '--policy round_robin'], workers: 2 });
    const r = JSON.parse(out) as Report;
    expect(r.trace.ceiling).toMatchObject({ input_tokens: 512, cached_tokens: 192 });
    const [ca, rr] = r.runs;
    expect(ca!.ceiling_share).toBe(1);
    // Round robin: each prefix lands on both engines, so each engine meets it cold once: 2 × 2 × 32 = 128.
    expect(rr!.cached_tokens).toBe(128);
    expect(rr!.ceiling_share).toBe(Math.round((128 / 192) * 10_000) / 10_000);
  });

  it('the text report states the ceiling, the reference point and the share of it per arm', async () => {
    const { out } = await bench(KNOWN, { json: false });
    expect(out).toContain('ceiling (an infinite prefix cache): 37.5% of prompt tokens cached; 50.0% of block references repeat\n');
    expect(out).toContain("reference point, not a ceiling: the fleet's KV as one shared LRU cache (1024 trace blocks) caches 37.5%\n");
    expect(out).toMatch(/\| cached tokens \| of ceiling \|/);
    expect(out).toMatch(/\| A \| \(defaults\) \|.*\| 37\.5% \| 100\.0% \|/);
  });
});

describe('prompt lengths: the context and refusals by reason', () => {
  // A 126K-token request among short ones, in blocks of 512 as the published traces.
  const long: TraceRequest[] = [
    { atMs: 0, inputLength: 600, outputLength: 8, hashIds: [1, 2] },
    { atMs: 500, inputLength: 126_000, outputLength: 200, hashIds: Array.from({ length: Math.ceil(126_000 / 512) }, (_, i) => 10 + i) },
    { atMs: 1000, inputLength: 700, outputLength: 8, hashIds: [1, 3] },
  ];
  const engines = { workers: 2, kvBlocks: 32_768 };

  it('a 126K-token request on 32,768 blocks an engine is refused by none at the default context, and said so before the run', async () => {
    const { out, notes } = await bench(long, { ...engines, compare: [''] }, 512);
    const r = JSON.parse(out) as Report;
    expect(r.fleet.context_length).toBe(131_072);
    expect(r.trace.over_context).toBe(0);
    expect(r.runs[0]).toMatchObject({ finished: 3, refused: 0, refused_by: { context_length: 0, kv_capacity: 0, queue_full: 0 } });
    expect(notes[0]).toBe('bench: 0 of 3 requests exceed the context length of 131072 tokens');
  });

  it('a shorter --sim-context-length refuses it for the context, and the count comes before the run', async () => {
    const { out, notes } = await bench(long, { ...engines, contextLength: 65_536 }, 512);
    const r = JSON.parse(out) as Report;
    expect(r.trace.over_context).toBe(1);
    expect(r.runs[0]).toMatchObject({ finished: 2, refused: 1, refused_by: { context_length: 1, kv_capacity: 0, queue_full: 0 } });
    expect(notes[0]).toBe('bench: 1 of 3 requests exceeds the context length of 65536 tokens (the engines refuse them)');
  });

  it('a KV cache smaller than the request refuses it for capacity, not the context', async () => {
    // 4,096 blocks of 16 = 65,536 tokens: within the context, beyond the pool.
    const { out } = await bench(long, { workers: 2, kvBlocks: 4096 }, 512);
    const r = JSON.parse(out) as Report;
    expect(r.trace.over_context).toBe(0);
    expect(r.runs[0]).toMatchObject({ refused: 1, refused_by: { context_length: 0, kv_capacity: 1, queue_full: 0 } });
  });

  it('the text report counts the refusals by reason under the table', async () => {
    const { out } = await bench(long, { ...engines, contextLength: 65_536, json: false }, 512);
    expect(out).toContain(
      'A: 1 refused by an engine (1 over the context length of 65536 tokens, 0 over its KV cache, 0 with its waiting queue full), 0 found no worker\n',
    );
  });
});
