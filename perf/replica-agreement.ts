/**
 * Do two router replicas behind one load balancer agree on who holds which prefix?
 * Two routers on the same simulated fleet share the traffic in turn (as a round-robin
 * balancer in front of them would); afterwards every prompt sent is looked up in both
 * indexes, and the share of prompts for which both name the same owners at the same
 * depths is the agreement. Once with indexes built from requests, once from the
 * engines' KV events.
 *
 *   npm run perf -- replicas [--requests 400] [--workers 4]
 *
 * With --late: how long a replica started after the engines takes to agree (its
 * /admin/state prefix_index.digest equal to the running replica's), on a simulated
 * SGLang fleet publishing KV events as SGLang does (perf/support/late-replica.ts):
 *
 *   npm run perf -- replicas --late [--targets 500,5000,50000] [--rounds 5] [--workers 4]
 *     [--kv-blocks 16384] [--block-size 16] [--replay-buffer 0 (half the batches)] [--concurrency 8]
 */
import { defaultConfig } from '../src/config/index.js';
import { HOT_PREFIX_CONVERSATIONS } from './support/hot-prefix.js';
import { chatBlockHashes, renderChat, tokenize } from '../src/prefix/index.js';
import type { ChatMessage } from '../src/prefix/index.js';
import { engineBlockKeys, Router, silentLogger } from '../src/router/index.js';
import { startSimFleet } from '../src/sim/index.js';
import { Workload } from '../src/workload/index.js';
import { lateReplicaBench } from './support/late-replica.js';
import { writeResult } from './support/results.js';

const argv = process.argv.slice(2);
const arg = (name: string, dflt: number): number => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const REQUESTS = arg('requests', 400);
const WORKERS = arg('workers', 4);
const BS = 16;

/** Owner URL → blocks held, as one router's index says. */
function owners(r: Router, source: 'requests' | 'events', messages: ChatMessage[]): string {
  const keys = source === 'events' ? engineBlockKeys(tokenize(renderChat(messages)), BS, 'sim') : chatBlockHashes(messages, BS * 4).hashes;
  const out = r.index.newMatchBuffer();
  const n = r.index.match(keys, out);
  const held = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const w = source === 'events' ? r.kvIndex.workerAt(out.slots[i]!) : r.registry.bySlotIndex(out.slots[i]!);
    if (w) held.set(w.url, Math.max(held.get(w.url) ?? 0, out.depths[i]!));
  }
  return [...held]
    .sort()
    .map(([u, d]) => `${u}:${d}`)
    .join(',');
}

const figures: Record<string, number | boolean> = { requests: REQUESTS, workers: WORKERS };

async function run(source: 'requests' | 'events'): Promise<string> {
  const fleet = await startSimFleet({
    workers: WORKERS,
    speedup: 20,
    kvBlocks: 4096,
    seed: 11,
    push: { kvEvents: true, kvFormat: 'array', loadPublish: true, topic: '' },
  });
  const config = {
    ...defaultConfig(),
    workerUrls: fleet.urls,
    port: 0,
    policy: 'cache_aware' as const,
    workerQueueLimit: 6,
    prefixSource: source,
    tui: false,
  };
  const replicas = [
    new Router({ config, log: silentLogger, version: 'bench' }),
    new Router({ config, log: silentLogger, version: 'bench' }),
  ];
  for (const r of replicas) await r.start();
  const workload = new Workload(HOT_PREFIX_CONVERSATIONS);
  const histories = new Map<number, ChatMessage[]>();
  const sent: ChatMessage[][] = [];
  for (let k = 0; k < REQUESTS; k++) {
    const a = workload.next();
    const history = histories.get(a.session) ?? [];
    const messages: ChatMessage[] = [
      { role: 'system', content: workload.systemPrompts[a.family]! },
      ...history,
      { role: 'user', content: a.userMessage },
    ];
    sent.push(messages);
    const res = await fetch(`${replicas[k % 2]!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages, max_tokens: a.maxTokens }),
    });
    const body = (await res.json()) as { choices?: Array<{ message?: { content?: string } }> };
    if (a.last) histories.delete(a.session);
    else
      histories.set(a.session, [
        ...history,
        { role: 'user', content: a.userMessage },
        { role: 'assistant', content: body.choices?.[0]?.message?.content ?? '' },
      ]);
  }
  // Let the last events arrive at both replicas.
  await new Promise((r) => setTimeout(r, 500));
  const [a, b] = replicas as [Router, Router];
  let agree = 0;
  for (const m of sent) if (owners(a, source, m) === owners(b, source, m)) agree++;
  const da = a.state().prefix_index;
  const db = b.state().prefix_index;
  for (const r of replicas) await r.close();
  await fleet.close();
  Object.assign(figures, {
    [`${source}_prompts_alike_pct`]: Number(((100 * agree) / sent.length).toFixed(1)),
    [`${source}_owner_pairs_a`]: da.owner_pairs,
    [`${source}_owner_pairs_b`]: db.owner_pairs,
    [`${source}_digests_equal`]: da.digest === db.digest,
  });
  return `| ${source} | ${REQUESTS} | ${((100 * agree) / sent.length).toFixed(1)} % | ${da.owner_pairs.toLocaleString('en')} / ${db.owner_pairs.toLocaleString('en')} | ${da.digest === db.digest ? 'equal' : 'differ'} |`;
}

if (argv.includes('--late')) {
  await lateReplicaBench();
  process.exit(0);
}

console.log(
  `node ${process.version}; ${REQUESTS} requests shared in turn by two replicas; ${WORKERS} simulated SGLang engines; hot-prefix conversations`,
);
console.log('');
console.log('| index built from | requests | prompts both replicas see alike | (block, owner) pairs: A / B | digests |');
console.log('|---|---:|---:|---:|---|');
for (const source of ['requests', 'events'] as const) console.log(await run(source));
writeResult('replicas', { figures, bottleneck: 'none: one request in flight; an agreement figure, not a rate' });
