import type { Router } from '../../src/router/index.js';
import { engineBlockKeys } from '../../src/router/index.js';
import type { EngineHashScheme } from '../../src/router/index.js';
import { eventually } from './http.js';

/** Wait until no KV batch has arrived for a little while: the index has caught up with the engines. */
export async function settled(r: Router): Promise<void> {
  const batches = (): number => r.state().workers.reduce((a, w) => a + (w.kv_events?.batches_total ?? 0), 0);
  let last = -1;
  await eventually(async () => {
    const now = batches();
    const quiet = now === last;
    last = now;
    return quiet;
  }, 5000, 60);
}

/**
 * What the router's events index says each worker holds of a prompt's tokens, in
 * tokens the engine would reuse: it always computes the prompt's last token, so it
 * reuses at most (length - 1) tokens' whole blocks.
 */
export function predictedByWorker(r: Router, tokens: readonly number[], blockSize: number, scheme: EngineHashScheme): Map<string, number> {
  const keys = engineBlockKeys(tokens, blockSize, scheme);
  const out = r.index.newMatchBuffer();
  const n = r.index.match(keys, out);
  const byUrl = new Map<string, number>();
  const cap = Math.floor((tokens.length - 1) / blockSize);
  for (let i = 0; i < n; i++) {
    const url = r.kvIndex.workerAt(out.slots[i]!)!.url;
    byUrl.set(url, Math.max(byUrl.get(url) ?? 0, Math.min(out.depths[i]!, cap) * blockSize));
  }
  return byUrl;
}
