import OpenAI from 'openai';
import { afterEach, expect, it } from 'vitest';
import { startPeerRouter } from '../../src/bench/index.js';
import type { PeerRouterName, RunningPeerRouter } from '../../src/bench/index.js';
import { parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';
import { describeWithPeers } from '../helpers/peers.js';

/**
 * The routers an operator would pick instead of routerctl (docs/peers.md §Peer routers),
 * each the real program at its pin, in front of three simulated engines: each starts and
 * routes the openai client's chats, and `routerctl top` reads where they went from the
 * router's own /metrics, checked against what each engine counted itself.
 */
let fleet: SimFleet | undefined;
let router: RunningPeerRouter | undefined;

afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = undefined;
  fleet = undefined;
});

async function start(name: PeerRouterName): Promise<{ client: OpenAI; router: RunningPeerRouter; fleet: SimFleet }> {
  fleet = await startSimFleet({ workers: 3, portBase: 0, speedup: 50 });
  router = await startPeerRouter(name, { workerUrls: fleet.urls });
  return { client: new OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'unused', maxRetries: 0 }), router, fleet };
}

const countOf = (fams: ReturnType<typeof parsePrometheusText>): number => sumSamples(fams.get('sglang:num_requests_total')) ?? 0;

/** Generation requests an engine counted itself (sglang:num_requests_total): where requests went, by the engine's word. */
async function engineCounts(f: SimFleet): Promise<number[]> {
  return Promise.all(f.urls.map(async (u) => countOf(parsePrometheusText(await (await fetch(`${u}/metrics`)).text()))));
}

/** A system prompt of some 600 tokens, one per tag: a prefix a cache-aware router can keep on one engine. */
const handbook = (tag: string): string =>
  Array.from({ length: 60 }, (_, i) => `Section ${i} of the ${tag} handbook says the router keeps prefixes warm.`).join(' ');

interface TopJson {
  workers: Array<{ url: string; requests_total: number | null }>;
  requests_total: number | null;
  own_counters: Array<{ metric: string; by: string | null; counts: Record<string, number> }>;
  cannot_show: string[];
}

const OWN: Record<PeerRouterName, { name: string; counter: string }> = {
  smg: { name: 'Shepherd Model Gateway', counter: 'smg_cache_aware_policy_branch_total' },
  'vllm-router': { name: 'vLLM router', counter: 'vllm_router_prefix_routing_decisions_total' },
};

for (const name of ['smg', 'vllm-router'] as const) {
  describeWithPeers([name], `${name} in front of simulated engines`, () => {
    it('starts, routes plain and streamed chats, and top reads from its /metrics where each went, as the engines counted them', async () => {
      const { client, router: r, fleet: f } = await start(name);
      for (let i = 0; i < 6; i++) {
        const c = await client.chat.completions.create({
          model: 'sim-llama-3.1-8b',
          messages: [{ role: 'user', content: `plain question ${i} for ${name}` }],
          max_tokens: 4,
        });
        expect(c.choices[0]!.message.content!.length).toBeGreaterThan(0);
      }
      for (let i = 0; i < 3; i++) {
        const stream = await client.chat.completions.create({
          model: 'sim-llama-3.1-8b',
          messages: [{ role: 'user', content: `streamed question ${i} for ${name}` }],
          max_tokens: 4,
          stream: true,
        });
        let text = '';
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
        expect(text.length).toBeGreaterThan(0);
      }
      const counted = await engineCounts(f);
      expect(counted.reduce((a, b) => a + b, 0)).toBe(9);

      const json = await runCli(['top', '--url', r.metricsUrl, '--json']);
      expect(json.code, json.stderr).toBe(0);
      const top = JSON.parse(json.stdout) as TopJson;
      expect(top.requests_total).toBe(9);
      // A worker it never sent to may have no series yet (the vLLM router's): read as none.
      const byUrl = new Map(top.workers.map((w) => [w.url, w.requests_total ?? 0]));
      expect(f.urls.map((u) => byUrl.get(u) ?? 0)).toEqual(counted);
      expect(top.own_counters.map((c) => c.metric)).toContain(OWN[name].counter);
      expect(top.cannot_show).toEqual(expect.arrayContaining(['queue limit', 'gate rejections']));

      const once = await runCli(['top', '--url', r.metricsUrl, '--once']);
      expect(once.code, once.stderr).toBe(0);
      expect(once.stdout).toContain(`source prometheus /metrics (${OWN[name].name})`);
      expect(once.stdout).toMatch(new RegExp(`its own: ${OWN[name].counter}\\{`));
      expect(once.stdout).toMatch(/cannot show \(.*\): .*queue limit/);
    });

    it('top pointed at its serving port says, in one line, where its metrics are', async () => {
      const { router: r } = await start(name);
      const res = await runCli(['top', '--url', r.url, '--once']);
      expect(res.code).toBe(1);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toMatch(/^error RCTL_E_NOT_A_ROUTER: .*--prometheus-port/);
    });
  });
}

describeWithPeers(['smg'], 'smg cache_aware on a shared prefix', () => {
  it('keeps a long shared system prompt on one engine once it has seen it, and says so in its branch counter', async () => {
    const { client, router: r, fleet: f } = await start('smg');
    for (let i = 0; i < 6; i++)
      await client.chat.completions.create({
        model: 'sim-llama-3.1-8b',
        messages: [
          { role: 'system', content: handbook('smg') },
          { role: 'user', content: `question ${i}` },
        ],
        max_tokens: 2,
      });
    const counted = await engineCounts(f);
    // The first goes anywhere; the five after it follow the prefix to the same engine.
    expect(Math.max(...counted)).toBeGreaterThanOrEqual(5);
    const top = JSON.parse((await runCli(['top', '--url', r.metricsUrl, '--json'])).stdout) as TopJson;
    const branches = top.own_counters.find((c) => c.metric === 'smg_cache_aware_policy_branch_total')!.counts;
    expect(branches.tree_match).toBeGreaterThanOrEqual(5);
  });
});

describeWithPeers(['vllm-router'], 'vllm-router cache_aware without the engine rendering tokens', () => {
  it('an engine without /v1/chat/completions/render leaves its cache_aware without tokens, and top shows it', async () => {
    const { client, router: r } = await start('vllm-router');
    for (let i = 0; i < 3; i++)
      await client.chat.completions.create({
        model: 'sim-llama-3.1-8b',
        messages: [
          { role: 'system', content: handbook('vllm-router') },
          { role: 'user', content: `question ${i}` },
        ],
        max_tokens: 2,
      });
    const top = JSON.parse((await runCli(['top', '--url', r.metricsUrl, '--json'])).stdout) as TopJson;
    const outcomes = top.own_counters.find((c) => c.metric === 'vllm_router_prefix_routing_decisions_total')!.counts;
    expect(outcomes.missing_tokens).toBe(3);
  });
});

describeWithPeers(['smg', 'vllm-router'], 'bench compare with peer routers as arms', () => {
  it('each peer arm gets its own fleet and the same arrivals; the engines report what each reused', async () => {
    const r = await runCli(['bench', 'compare', '', 'smg', 'vllm-router', '--duration', '4s', '--sim-workers', '3', '--json'], {
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      same_arrivals: boolean;
      runs: Array<{ label: string; router: unknown; summary: { requests: { ok: number }; cache: { ratio: number | null } } }>;
    };
    expect(report.same_arrivals).toBe(true);
    expect(report.runs.map((x) => x.label)).toEqual(['(defaults)', 'smg', 'vllm-router']);
    for (const run of report.runs) {
      expect(run.summary.requests.ok).toBeGreaterThan(0);
      expect(run.summary.cache.ratio).not.toBeNull();
    }
    // A peer books no routerctl decisions: its counters are its own.
    expect(report.runs[0]!.router).not.toBeNull();
    expect(report.runs[1]!.router).toBeNull();
  });
});

// No peer needed: the refusal comes before any router starts.
it('bench compare refuses a peer arm on the virtual clock, in one line', async () => {
  const r = await runCli(['bench', 'compare', '', 'smg', '--workload', 'gsp', '--clock', 'virtual']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^error \S+: a peer router runs as a program of its own: on the wall clock only/);
});
