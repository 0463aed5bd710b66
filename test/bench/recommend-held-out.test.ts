import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTraceBench } from '../../src/bench/index.js';
import type { TraceBenchOptions } from '../../src/bench/index.js';
import type { Recommendation } from '../../src/bench/recommend/index.js';
import { conversationTrace, SMALL_CONVERSATIONS, toMooncakeJsonl } from '../../src/workload/index.js';

/**
 * The acceptance of `bench compare --recommend` (docs/bench.md §Recommend): on a
 * 2,000-request conversationTrace, the held-out check agrees with the pick at 80 %,
 * 95 % and 110 % of the rate at which plain cache_aware's goodput first drops below
 * 90 %. The windows are slices of one continuous replay of the whole trace per
 * configuration, so a later window meets the queue the earlier ones left. The virtual
 * clock makes it deterministic. The rate is found here by a sweep (rate90), as
 * `npm run perf -- recommend` (perf/recommend-check.ts) finds it: it sits on a cliff
 * (47 req/s when written), where the phase of the load samples against the arrivals
 * moves goodput by points, so it is derived, not pinned.
 */
const trace = (rate: number) =>
  conversationTrace({
    requests: 2000,
    rate,
    ...SMALL_CONVERSATIONS,
    seed: 1,
  });
const FLEET = { workers: 4, kvBlocks: 1024, maxRunning: 8 };

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'routerctl-recommend-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function bench(rate: number, o: Partial<TraceBenchOptions>): Promise<unknown> {
  const file = path.join(dir, `conversations-${rate}.jsonl`);
  await writeFile(file, toMooncakeJsonl(trace(rate)));
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  await runTraceBench(
    {
      file,
      traceBlockSize: 64,
      speedup: 1,
      limit: undefined,
      window: undefined,
      compare: [],
      sweep: [],
      routerArgs: '',
      ...FLEET,
      contextLength: 131_072,
      seed: 7,
      sloTtftMs: 2000,
      json: true,
      clock: 'virtual',
      simSpeedup: 1,
      timeoutMs: 10_000,
      ...o,
    },
    sink,
  );
  return JSON.parse(out);
}

/**
 * The first rate, in whole req/s, at which plain cache_aware's goodput is below 90 %:
 * steps of 4 from 32 until it is, then the three rates before that one, upward.
 */
async function rate90(): Promise<number> {
  const goodput = async (rate: number) => ((await bench(rate, { compare: [''] })) as { runs: Array<{ goodput: number }> }).runs[0]!.goodput;
  let high = 32;
  while ((await goodput(high)) >= 0.9) high += 4;
  for (let rate = high - 3; rate < high; rate++) if ((await goodput(rate)) < 0.9) return rate;
  return high;
}

describe('bench compare --recommend on a 2,000-request conversation trace', () => {
  let rate = 0;
  beforeAll(async () => {
    rate = await rate90();
  }, 60_000);

  it('plain cache_aware saturates within the sweep', () => {
    expect(rate).toBeGreaterThan(32);
    expect(rate).toBeLessThan(100);
  });

  it.each([0.8, 0.95, 1.1])('at %d × that rate the held-out windows agree with the pick', async (load) => {
    const at = Math.round(rate * load * 10) / 10;
    const report = (await bench(at, {
      compare: ['--policy round_robin'],
      sweep: ['worker-queue-limit=off,2,4,8'],
      recommend: true,
    })) as { recommend: Recommendation & { samples: Array<{ requests: number }> } };
    const r = report.recommend;
    expect(r.samples.reduce((a, s) => a + s.requests, 0)).toBe(2000);
    expect(r.configurations.map((c) => c.gate)).toEqual([false, false, true, true, true]);
    expect(r.check.agrees).toBe(true);
    expect(r.verdict).toBe('holds');
    // Past saturation the backlog carries over from window to window: the held-out half, later, fares worse.
    const plain = r.configurations[1]!;
    if (load > 1) expect(plain.check.goodput).toBeLessThan(plain.pick.goodput);
  });
});
