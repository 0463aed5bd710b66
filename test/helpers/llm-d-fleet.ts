import OpenAI from 'openai';
import { LLM_D_SIM_TOKENIZER } from '../../src/tokenizer/index.js';
import type { RunningCli } from './cli.js';
import { eventually } from './http.js';
import { kvEventsFor, startLlmdSims } from './llm-d-sim.js';
import type { LlmdSim, LlmdSimOptions } from './llm-d-sim.js';
import { adminState, startPeerRouter } from './peer-router.js';

/**
 * What the tests that route over llm-d-inference-sim engines share (test/peers/llm-d-sim,
 * test/peers/envoy-epp): prompts with a long shared prefix and a marker the engines'
 * own logs are searched for, requests sent to one engine directly (so only its KV
 * events can tell the router), and waits for those events to arrive.
 */

/** A system prompt of about 500 of the simulator's tokens (32 blocks of 16), unique to `tag`. */
export const system = (tag: string): string =>
  Array.from({ length: 30 }, (_, i) => `Section ${i} of the ${tag} handbook says the router keeps prefixes warm.`).join(' ');

export const chat = (tag: string, marker: string): OpenAI.Chat.ChatCompletionMessageParam[] => [
  { role: 'system', content: system(tag) },
  { role: 'user', content: `Question ${marker}: what does the handbook say?` },
];

/** Send a chat straight to one engine (never routed), so only its KV events can tell the router. */
export async function direct(
  sim: LlmdSim,
  messages: OpenAI.Chat.ChatCompletionMessageParam[],
  maxTokens = 1,
): Promise<OpenAI.Chat.ChatCompletion> {
  const c = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  return c.chat.completions.create({ model: 'tiny', messages, max_tokens: maxTokens });
}

/** KV events the router has applied from this engine. */
export const eventsOf = async (url: string, sim: LlmdSim): Promise<number> =>
  (await adminState(url)).workers.find((w) => w.url === sim.url)!.kv_events!.events_total;

/** Wait until the router has applied a stored run from this engine's KV events past `before`. */
export async function eventsApplied(url: string, sim: LlmdSim, before: number): Promise<void> {
  await eventually(async () => (await eventsOf(url, sim)) > before, 10_000, 50);
}

/**
 * Each engine's publisher dials the router's endpoint once a second until it is bound,
 * and what it publishes before that is lost (it keeps no replay): wait until its
 * events arrive.
 */
export async function eventsLive(url: string, sim: LlmdSim, i: number): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const before = await eventsOf(url, sim);
    await direct(sim, chat(`live${i}-${attempt}`, `mk-live-${i}-${attempt}`));
    // The engine batches its events for up to a second.
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      if ((await eventsOf(url, sim)) > before) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`no KV events from ${sim.url} in 30 s`);
}

/** Warm `sim` with the tag's prefix, sent to it directly, and wait until the router has its events. */
export async function warm(url: string, sim: LlmdSim, tag: string, marker: string): Promise<void> {
  const before = await eventsOf(url, sim);
  await direct(sim, chat(tag, marker));
  await eventsApplied(url, sim, before);
}

/**
 * `n` engines and `serve` in front of them, their KV events bound by the router and keyed
 * by the engines' own tokenizer; resolves once every engine is sampled and its events
 * arrive.
 */
export async function startRoutedFleet(
  n: number,
  o: LlmdSimOptions,
  routerArgs: readonly string[] = [],
): Promise<{ sims: LlmdSim[]; cli: RunningCli; url: string; client: OpenAI }> {
  const sims = await startLlmdSims(n, o);
  try {
    const { cli, url, client } = await startPeerRouter(
      sims.map((s) => s.url),
      ['--kv-events', kvEventsFor(sims), '--tokenizer', LLM_D_SIM_TOKENIZER, ...routerArgs],
    );
    try {
      await eventually(async () => (await adminState(url)).workers.every((w) => w.fresh), 10_000, 50);
      await Promise.all(sims.map((s, i) => eventsLive(url, s, i)));
    } catch (err) {
      cli.child.kill('SIGKILL');
      throw err;
    }
    return { sims, cli, url, client };
  } catch (err) {
    await Promise.all(sims.map((s) => s.close()));
    throw err;
  }
}
