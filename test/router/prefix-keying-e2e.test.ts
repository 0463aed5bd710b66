/**
 * Prefix keying is paid only by a policy that reads it (docs/routing.md): under
 * round_robin, random and power_of_n the router neither keys requests nor records
 * owners in the prefix index; under cache_aware it does both. Real sim engines, the
 * real router, the official openai client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import { startTestRouter } from '../helpers/router.js';

let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = fleet = undefined;
});

const system = 'Shared operations runbook. '.repeat(300);

describe('prefix keying follows the policy', () => {
  it.each([
    { policy: 'round_robin' as const, indexed: false },
    { policy: 'random' as const, indexed: false },
    { policy: 'power_of_n' as const, indexed: false },
    { policy: 'cache_aware' as const, indexed: true },
  ])('$policy: prefix index written: $indexed', async ({ policy, indexed }) => {
    fleet = await startSimFleet({ workers: 2, portBase: 0, host: '127.0.0.1', seed: 3, params: { speedup: 100 } });
    router = await startTestRouter(fleet.urls, { policy });
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'none', maxRetries: 0 });
    for (let i = 0; i < 3; i++) {
      const r = await client.chat.completions.create({
        model: 'sim-llama-3.1-8b',
        max_tokens: 4,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: `question ${i}` },
        ],
      });
      expect(r.choices[0]?.message.content?.length).toBeGreaterThan(0);
    }
    expect(router.index.size > 0).toBe(indexed);
  });
});

describe('long bodies', () => {
  it('a 1 MB chat body of multi-byte text, read in many chunks, is parsed, keyed and forwarded byte for byte', async () => {
    fleet = await startSimFleet({
      workers: 2,
      portBase: 0,
      host: '127.0.0.1',
      seed: 4,
      params: { speedup: 100, maxModelLen: 1_000_000, kvBlocks: 32768 },
    });
    router = await startTestRouter(fleet.urls, { policy: 'cache_aware' });
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'none', maxRetries: 0 });
    // Three-byte characters: chunk boundaries fall inside them.
    const doc = '状態の記録 — état '.repeat(40_000);
    expect(Buffer.byteLength(doc)).toBeGreaterThan(1_000_000);
    for (const question of ['first', 'second']) {
      const r = await client.chat.completions.create({
        model: 'sim-llama-3.1-8b',
        max_tokens: 4,
        messages: [
          { role: 'system', content: doc },
          { role: 'user', content: question },
        ],
      });
      expect(r.choices[0]?.message.content?.length).toBeGreaterThan(0);
    }
    // The second request found the first one's prefix: the key survived the chunking.
    expect(router.state().decisions.cache_hit).toBe(1);
  });
});
