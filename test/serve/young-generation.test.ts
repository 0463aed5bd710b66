import { execFile } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assertBuilt, repoRoot } from '../cli/support.js';

const moduleUrl = pathToFileURL(path.join(repoRoot, 'dist/src/serve/young-generation.js')).href;

/**
 * A fresh node process that (per `call`) runs keepRequestsYoung as the router's start
 * does, then allocates 2,000,000 objects from one site in 40 rounds, all kept: V8
 * pretenures such a site after a few scavenges, so with pretenuring on the later rounds
 * are allocated straight into the old generation and the young one stops growing.
 * Prints in how many of the last 20 rounds the young generation grew by at least a
 * third of a round (a round is about 1.6 MB), and what keepRequestsYoung returned.
 * Growth per round, not its size at the end: without pretenuring it fills and empties
 * with each scavenge, so a reading at one moment can fall just after one.
 */
function probe(call: 'none' | 'default' | 'kept'): Promise<{ grewRounds: number; turnedOff: boolean | null }> {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    const { keepRequestsYoung, KEEP_PRETENURING } = await import(${JSON.stringify(moduleUrl)});
    const call = ${JSON.stringify(call)};
    const turnedOff = call === 'none' ? null : keepRequestsYoung(call === 'kept' ? [KEEP_PRETENURING] : []);
    function make(i) { return { i, next: null }; }
    const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_used_size;
    const keep = [];
    let grewRounds = 0;
    for (let round = 0; round < 40; round++) {
      const before = young();
      for (let i = 0; i < 50000; i++) keep.push(make(i));
      if (round >= 20 && young() - before > 0.5e6) grewRounds++;
    }
    console.log(JSON.stringify({ grewRounds, turnedOff, kept: keep.length }));
  `;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 }, (err, stdout) => {
      if (err) return reject(err);
      resolve(JSON.parse(stdout) as { grewRounds: number; turnedOff: boolean | null });
    });
  });
}

describe('keepRequestsYoung (the router process without allocation-site pretenuring)', () => {
  assertBuilt();

  it('keeps objects of a site whose objects all survive in the young generation', async () => {
    const [untouched, young] = await Promise.all([probe('none'), probe('default')]);
    // The probe tells the two apart: left alone, V8 pretenures the site.
    expect(untouched.grewRounds).toBeLessThanOrEqual(4);
    expect(young.turnedOff).toBe(true);
    expect(young.grewRounds).toBeGreaterThanOrEqual(15);
  });

  it('leaves V8 alone when node was started with --allocation-site-pretenuring', async () => {
    const kept = await probe('kept');
    expect(kept.turnedOff).toBe(false);
    expect(kept.grewRounds).toBeLessThanOrEqual(4);
  });
});
