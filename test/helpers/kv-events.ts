import OpenAI from 'openai';
import { renderChat, tokenize } from '../../src/prefix/index.js';
import type { Router } from '../../src/router/index.js';
import { engineBlockKeys } from '../../src/router/index.js';
import type { EngineHashScheme } from '../../src/router/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually } from './http.js';

/**
 * Wait until every engine's KV publisher has the router's subscription. A PUB socket
 * drops what it publishes before then (ZMQ's slow joiner); with a replay endpoint the
 * router fetches it back, without one it is gone, so a test that warms an engine right
 * after the router started waits for this first.
 */
export async function subscribed(fleet: SimFleet): Promise<void> {
  await eventually(async () => fleet.servers.every((s) => s.engine.push?.kvSubscribed() ?? true), 10_000, 20);
}

/** Wait until no KV batch has arrived for a little while: the index has caught up with the engines. */
export async function settled(r: Router): Promise<void> {
  const batches = (): number => r.state().workers.reduce((a, w) => a + (w.kv_events?.batches_total ?? 0), 0);
  let last = -1;
  await eventually(
    async () => {
      const now = batches();
      const quiet = now === last;
      last = now;
      return quiet;
    },
    5000,
    60,
  );
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

/**
 * Send `total` chats (four long system prompts, six questions) through the official
 * client, and count how often the events index predicted exactly the cached tokens
 * the engine then reported (`agree`), and how many requests reused anything (`hits`).
 */
export async function predictionAgreement(
  r: Router,
  total: number,
  blockSize: number,
  scheme: EngineHashScheme,
): Promise<{ agree: number; hits: number }> {
  const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'none', maxRetries: 0 });
  const systems = Array.from({ length: 4 }, (_, i) => `You are assistant number ${i}. `.repeat(40));
  let agree = 0;
  let hits = 0;
  for (let k = 0; k < total; k++) {
    const messages = [
      { role: 'system', content: systems[k % systems.length]! },
      { role: 'user', content: `question ${k % 6}` },
    ];
    await settled(r);
    const expectation = predictedByWorker(r, tokenize(renderChat(messages)), blockSize, scheme);
    const before = new Map(r.state().workers.map((w) => [w.url, w.requests_total]));
    const res = await client.chat.completions.create({ model: 'sim-llama-3.1-8b', messages: messages as never, max_tokens: 2 });
    const served = r.state().workers.find((w) => w.requests_total > before.get(w.url)!)!.url;
    const cached = res.usage?.prompt_tokens_details?.cached_tokens ?? -1;
    if ((expectation.get(served) ?? 0) === cached) agree++;
    if (cached > 0) hits++;
  }
  return { agree, hits };
}
