import { describe, expect, it } from 'vitest';
import { blockHashes } from '../../src/prefix/index.js';
import { tokenPrompt } from '../../src/sim/index.js';
import { traceBlockKeys, traceKeyable, tracePrompt, tracePromptTokens } from '../../src/workload/index.js';
import type { TraceRequest } from '../../src/workload/index.js';

const T = 64;
const req = (inputLength: number, hashIds: number[]): TraceRequest => ({ atMs: 0, inputLength, outputLength: 4, hashIds });

/** Random prompts over a handful of ids, so that many share prefixes, partial last blocks included. */
function prompts(n: number): TraceRequest[] {
  let s = 11;
  const rnd = (k: number): number => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) % k;
  return Array.from({ length: n }, () => {
    const blocks = 1 + rnd(5);
    const ids = Array.from({ length: blocks }, (_, b) => (b < 2 ? rnd(2) : rnd(4)));
    return req((blocks - 1) * T + 1 + rnd(T), ids);
  });
}

describe('block keys from a trace’s hash ids (traceBlockKeys)', () => {
  it('two prompts share a key for block j exactly when their tokens agree up to its end', () => {
    const ps = prompts(120);
    for (const bs of [16, 32, 64]) {
      const byIds = ps.map((r) => traceBlockKeys(r, T, bs));
      const byTokens = ps.map((r) => blockHashes(tracePromptTokens(r, T), bs));
      const disagreements: string[] = [];
      let shared = 0;
      for (let a = 0; a < ps.length; a++) {
        expect(byIds[a]!.length).toBe(byTokens[a]!.length);
        for (let b = a + 1; b < ps.length; b++) {
          const n = Math.min(byIds[a]!.length, byIds[b]!.length);
          for (let j = 0; j < n; j++) {
            const same = byTokens[a]![j] === byTokens[b]![j];
            if (same) shared++;
            if ((byIds[a]![j] === byIds[b]![j]) !== same) disagreements.push(`${a}/${b} block ${j}`);
          }
        }
      }
      expect(disagreements).toEqual([]);
      expect(shared).toBeGreaterThan(100);
    }
  });

  it('keys a block apart from every other block of the prompt and from other depths', () => {
    const keys = traceBlockKeys(req(5 * T, [1, 1, 1, 1, 1]), T, 16);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('a prompt keyed so has the tokens of tracePromptTokens, and the chain goes on as a token prompt’s does', () => {
    for (const r of prompts(40)) {
      const keys = traceBlockKeys(r, T, 16);
      const p = tracePrompt(r, T, 16, keys);
      const tokens = tracePromptTokens(r, T);
      expect(p.length).toBe(r.inputLength);
      expect(p.tokens()).toEqual(tokens);
      // Past the whole blocks: the same keys for the same tokens after the same prefix, new ones otherwise.
      const output = [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23];
      const again = tracePrompt(r, T, 16, traceBlockKeys(r, T, 16));
      expect(p.keysAfter(output)).toEqual(again.keysAfter(output));
      expect(p.keysAfter(output)).toHaveLength(Math.floor((r.inputLength + output.length) / 16) - keys.length);
      expect(p.keysAfter(output)).not.toEqual(p.keysAfter(output.map((t) => t + 1)));
      expect(tokenPrompt(tokens, 16).keysAfter(output)).toEqual(blockHashes([...tokens, ...output], 16).slice(keys.length));
    }
  });

  it('needs a block size that divides the trace’s', () => {
    expect(traceKeyable(512, 16)).toBe(true);
    expect(traceKeyable(512, 512)).toBe(true);
    expect(traceKeyable(512, 24)).toBe(false);
    expect(traceKeyable(64, 128)).toBe(false);
  });
});
