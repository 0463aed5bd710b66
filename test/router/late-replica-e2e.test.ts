import { describe, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { Rng, startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually, getJson, rawRequest } from '../helpers/http.js';
import { settled } from '../helpers/kv-events.js';
import { closingAfterEach } from '../helpers/lifecycle.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * Router replicas that start after the engines (a scale-up, a rolling restart) catch
 * up from the engines' replay sockets, found as SGLang publishes them: the
 * `replay_endpoint` in the raw `kv_events_config` server argument of `/server_info`,
 * since SGLang's `kv_events` descriptor has none (docs/engine-push.md §Catching up).
 * The engines are `sim --as-sglang`, which writes exactly SGLang's descriptor and
 * hashes its pages with SGLang's SHA-256 chain; traffic is token ids, which need no
 * tokenizer. What a user sees is compared: the replicas' index digests in
 * /admin/state, and their catch-up verdicts.
 */
const pushing = { kvEvents: true, kvFormat: 'map' as const, loadPublish: true, topic: 'kv' };
const opts = { policy: 'cache_aware' as const, workerQueueLimit: 6, prefixSource: 'events' as const };

const closing = closingAfterEach();
let fleet: SimFleet | undefined;

async function replica(): Promise<Router> {
  return closing(await startTestRouter(fleet!.urls, opts));
}

/** `n` /generate requests of distinct token ids through `r`; returns once the engines' events have settled there. */
async function traffic(r: Router, n: number, seed: number): Promise<void> {
  const rng = new Rng(seed);
  for (let k = 0; k < n; k++) {
    const ids = Array.from({ length: 400 + rng.int(400) }, () => 1 + rng.int(150_000));
    const res = await rawRequest(`${r.url}/generate`, {
      method: 'POST',
      body: JSON.stringify({ input_ids: ids, sampling_params: { max_new_tokens: 2 } }),
    });
    expect(res.status).toBe(200);
  }
  await settled(r);
}

async function agreeWith(late: Router, running: Router): Promise<void> {
  await settled(late);
  await eventually(async () => late.state().prefix_index.digest === running.state().prefix_index.digest, 5000);
  expect(late.state().prefix_index).toMatchObject({
    blocks: running.state().prefix_index.blocks,
    owner_pairs: running.state().prefix_index.owner_pairs,
  });
}

describe('a replica that starts after the engines', () => {
  it('finds the replay socket in kv_events_config, replays what was stored, and holds the running replica digest', async () => {
    fleet = closing(await startSimFleet({ workers: 2, speedup: 50, push: pushing, asSglang: true }));
    // The engine advertises no replay key in its descriptor: only the raw server argument names it.
    const info = (await getJson(`${fleet.urls[0]}/server_info`)) as { kv_events: Record<string, unknown>; kv_events_config: string };
    expect(Object.keys(info.kv_events)).not.toContain('replay_endpoint_port_base');
    expect(JSON.parse(info.kv_events_config)).toHaveProperty('replay_endpoint');

    const first = await replica();
    await traffic(first, 16, 1);
    expect(first.state().prefix_index.blocks).toBeGreaterThanOrEqual(500);

    const late = await replica();
    await agreeWith(late, first);
    for (const w of late.state().workers) {
      expect(w.kv_events).toMatchObject({
        catch_up: 'complete',
        catch_up_missed_batches: 0,
        replay_from: 'kv_events_config',
        lost_total: 0,
        note: null,
      });
      expect(w.kv_events!.replay_endpoints).toEqual([expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/)]);
    }
    expect(late.state().workers.reduce((a, w) => a + w.kv_events!.replayed_at_start_total, 0)).toBeGreaterThan(0);
    const metrics = (await rawRequest(`${late.url}/metrics`)).text;
    expect(metrics).toContain(`sgl_router_kv_event_catch_up{worker="${fleet.urls[0]}",outcome="complete"} 1`);

    // Both replicas go on agreeing as traffic goes on through either.
    await traffic(late, 4, 2);
    await settled(first);
    expect(late.state().prefix_index.digest).toBe(first.state().prefix_index.digest);
  });

  it('a replica restarted mid-run catches up again', async () => {
    fleet = closing(await startSimFleet({ workers: 2, speedup: 50, push: pushing, asSglang: true }));
    const first = await replica();
    await traffic(first, 8, 3);
    // Not closed after the test: it is stopped here.
    const second = await startTestRouter(fleet.urls, opts);
    await agreeWith(second, first);
    await second.close();
    // Traffic the restarted replica was not there for.
    await traffic(first, 8, 4);
    const restarted = await replica();
    await agreeWith(restarted, first);
    expect(restarted.state().workers.every((w) => w.kv_events!.catch_up === 'complete')).toBe(true);
  });

  it('after the replay buffer rolled over, the catch-up is partial and says so', async () => {
    fleet = closing(await startSimFleet({ workers: 1, speedup: 50, push: { ...pushing, replayBuffer: 4 }, asSglang: true }));
    const first = await replica();
    await traffic(first, 10, 5);
    const late = await replica();
    await settled(late);
    const kv = await eventually(async () => {
      const k = late.state().workers[0]!.kv_events!;
      return k.catch_up !== 'pending' && k;
    });
    expect(kv.catch_up).toBe('partial');
    expect(kv.catch_up_missed_batches).toBeGreaterThan(0);
    expect(kv.replayed_at_start_total).toBe(4);
    expect(kv.note).toMatch(/^partial catch-up: the engine's replay buffer no longer held the first \d+ batches/);
    // Not silently partial: it holds less than the replica that was there all along.
    expect(late.state().prefix_index.blocks).toBeLessThan(first.state().prefix_index.blocks);
    const metrics = (await rawRequest(`${late.url}/metrics`)).text;
    expect(metrics).toContain(`sgl_router_kv_event_catch_up{worker="${fleet.urls[0]}",outcome="partial"} 1`);
  });
});
