/**
 * Prefix-key and prefix-match cost per request for 1K- to 100K-token prompts, and the
 * memory of the prefix index per million blocks.
 *
 *   npm run perf -- prefix
 *
 * "key" is what the router does per request: encode the rendered prompt as UTF-8 and
 * chain-hash it in 64-byte blocks, a 4-byte word per step. Two alternatives are
 * measured beside it: "code-unit key", the earlier keying (64 UTF-16 code units per
 * block, read one at a time with charCodeAt), and "tokenizer key" (our stand-in
 * tokenizer, then 16-token blocks). "match" walks the index for a prompt whose
 * prefix 8 workers hold to different depths.
 */
import { blockHashes, textBlockHashes, tokenize } from '../src/prefix/index.js';
import { PrefixIndex } from '../src/router/state/prefix-index/index.js';
import { systemPrompt } from '../src/workload/index.js';
import { atMost, writeResult } from './support/results.js';

function time(fn: () => void, minMs = 300): number {
  for (let i = 0; i < 20; i++) fn();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs) {
    fn();
    n++;
  }
  return ((performance.now() - t0) / n) * 1000; // µs per call
}

/** The earlier keying, kept here only as the measured alternative. */
function codeUnitKey(text: string, chunkChars: number): number[] {
  const full = Math.floor(text.length / chunkChars);
  const out = new Array<number>(full);
  let hi = 0x6a09e667;
  let lo = 0xbb67ae85;
  for (let b = 0; b < full; b++) {
    for (let i = b * chunkChars; i < (b + 1) * chunkChars; i++) {
      const t = text.charCodeAt(i);
      lo = Math.imul(lo ^ t, 0x01000193);
      hi = Math.imul(hi ^ (t + 0x9e3779b9), 0x85ebca6b);
      hi ^= hi >>> 13;
    }
    lo = Math.imul(lo ^ b, 0x85ebca6b) >>> 0;
    hi = Math.imul(hi ^ lo, 0xc2b2ae35) >>> 0;
    out[b] = (hi & 0xfffff) * 0x1_0000_0000 + lo;
  }
  return out;
}

const index = new PrefixIndex({ maxBlocks: 1_000_000 });
const buf = index.newMatchBuffer();
console.log(`node ${process.version}`);
console.log(
  '| prompt | chars | key (64-byte blocks) | code-unit key (64 units) | tokenizer key (16-token blocks) | match, 8 owners | key + match |',
);
console.log('|---|---|---|---|---|---|---|');
const figures: Record<string, number> = {};
const us = (x: number): number => Number(x.toFixed(1));
for (const tokens of [1024, 8192, 32768, 102400]) {
  const text = systemPrompt(11, tokens, tokens);
  const hashes = textBlockHashes(text, 64);
  for (let w = 0; w < 8; w++) index.record(w, hashes, Math.floor(hashes.length * (0.5 + w / 16)));
  const key = time(() => void textBlockHashes(text, 64));
  const units = time(() => void codeUnitKey(text, 64));
  const tok = time(() => void blockHashes(tokenize(text), 16));
  const match = time(() => void index.match(hashes, buf));
  const k = `${Math.round(tokens / 1024)}k`;
  Object.assign(figures, {
    [`key_${k}_us`]: us(key),
    [`code_unit_key_${k}_us`]: us(units),
    [`tokenizer_key_${k}_us`]: us(tok),
    [`match_${k}_us`]: us(match),
    [`key_plus_match_${k}_us`]: us(key + match),
  });
  console.log(
    `| ${tokens / 1024}K tokens | ${text.length} | ${key.toFixed(1)} µs | ${units.toFixed(1)} µs | ${tok.toFixed(1)} µs | ${match.toFixed(1)} µs | ${(key + match).toFixed(1)} µs |`,
  );
}

// Memory: a full index of one million blocks, measured as heap + external delta.
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const before = process.memoryUsage();
const big = new PrefixIndex({ maxBlocks: 1_000_000 });
// 1,000 distinct prompts of 1,000 blocks each, recorded for 16 workers in turn.
const tokens = new Array<number>(16_000);
for (let c = 0; c < 1000; c++) {
  for (let i = 0; i < tokens.length; i++) tokens[i] = (c * 2654435761 + i * 40503) >>> 0;
  big.record(c % 16, blockHashes(tokens, 16));
}
gc?.();
const after = process.memoryUsage();
const mb = (x: number) => (x / 2 ** 20).toFixed(1);
// `external` already counts ArrayBuffer memory, so heap + external is the whole JS footprint.
const js = after.heapUsed + after.external - before.heapUsed - before.external;
console.log(
  `\nprefix index at ${big.size.toLocaleString()} blocks: its arrays ${mb(big.bytes)} MiB; JS heap + external delta ${mb(js)} MiB; rss delta ${mb(after.rss - before.rss)} MiB${gc ? '' : ' (run with --expose-gc for stable numbers)'}`,
);
writeResult('prefix', {
  figures: {
    ...figures,
    index_blocks: big.size,
    index_arrays_mib: Number(mb(big.bytes)),
    index_js_delta_mib: Number(mb(js)),
    index_rss_delta_mib: Number(mb(after.rss - before.rss)),
    index_bytes_per_block: Math.round(big.bytes / big.size),
    gc_exposed: gc !== undefined,
  },
  goals: [atMost('prefix key + match for a 100K-token prompt', figures.key_plus_match_100k_us!, 500, ' µs')],
  bottleneck: 'one core running the keying and match code in this process; no client, upstream or network',
});
