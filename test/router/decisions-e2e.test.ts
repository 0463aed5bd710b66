import { afterEach, describe, expect, it } from 'vitest';
import type { AdminDecision, AdminDecisions } from '../../src/contract/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';
import { getJson, rawRequest } from '../helpers/http.js';
import type { RawResponse } from '../helpers/http.js';
import { pinWaiting } from '../helpers/pin-load.js';
import { sendChatWithId, startTestRouter } from '../helpers/router.js';

/**
 * Decision records end to end (docs/decisions.md §Decision record): real simulated
 * engines with their loads pinned, the real router, requests sent with the client's
 * own x-request-id; each decision label's record is read back from /admin/decisions
 * and told as a story by the built `routerctl explain`.
 */
const model = 'sim-llama-3.1-8b';
const LIMIT = 4;
// ~1,500 estimated tokens: clears the default 1,024-token affinity minimum.
const PROMPT = 'Shared operations runbook. '.repeat(230);

let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = fleet = undefined;
});

const send = (r: Router, id: string): Promise<RawResponse> => sendChatWithId(r, id, PROMPT, model);

const pin = pinWaiting;

const record = (r: Router, id: string): AdminDecision => r.decisionsDoc({ requestId: id }).decisions.at(-1)!;
const host = (url: string): string => url.replace(/^https?:\/\//, '');

describe('decision records', () => {
  it('each label leaves a record whose owner, gate verdicts and matched blocks are what the test forced; explain tells each verbatim', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls, { workerQueueLimit: LIMIT, decisionHeader: 'urls' }));

    // No owner yet: a miss.
    const first = await send(r, 'miss-1');
    expect(first.headers['x-request-id']).toBe('miss-1');
    const miss = record(r, 'miss-1');
    const a = miss.worker;
    const b = fleet.urls.find((u) => u !== a)!;
    expect(miss).toMatchObject({ decision: 'cache_miss', matched_blocks: 0, best_worker: null, candidates: [], status: 200 });
    const q = miss.query_blocks;
    expect(q).toBeGreaterThan(20);
    expect(first.headers['x-router-decision']).toBe(`cache_miss; worker=${a}; matched=0/${q}; best=-; best_matched=0/${q}`);

    // The owner is idle: a hit on it.
    await send(r, 'hit-1');
    expect(record(r, 'hit-1')).toMatchObject({
      decision: 'cache_hit',
      worker: a,
      matched_blocks: q,
      best_worker: a,
      best_matched_blocks: q,
      candidates: [{ worker: a, matched_blocks: q, waiting: 0, gate: 'admitted' }],
    });

    // The owner at the limit: diverted to the other worker, the overlap given up.
    await pin(r, { [a]: LIMIT });
    await send(r, 'queued-1');
    expect(record(r, 'queued-1')).toMatchObject({
      decision: 'cache_worker_queued',
      worker: b,
      matched_blocks: 0,
      best_worker: a,
      best_matched_blocks: q,
      candidates: [{ worker: a, matched_blocks: q, waiting: LIMIT, gate: 'gated' }],
      gate_rejected: 1,
      diverted_blocks: q,
      fleet_all_queued: false,
    });

    // Both at the limit (both own the prefix now): affinity kept, all_queued.
    await pin(r, { [b]: LIMIT + 2 });
    await send(r, 'all-1');
    const all = record(r, 'all-1');
    expect(all).toMatchObject({ decision: 'all_queued', fleet_all_queued: true, best_matched_blocks: q });
    expect(all.candidates.map((c) => [c.worker, c.gate, c.waiting]).sort()).toEqual(
      [
        [a, 'gated', LIMIT],
        [b, 'gated', LIMIT + 2],
      ].sort(),
    );

    // What the engine reported is on every completed record.
    for (const id of ['miss-1', 'hit-1', 'queued-1', 'all-1']) {
      const d = record(r, id);
      expect(d.status).toBe(200);
      expect(d.cached_tokens).not.toBeNull();
      expect(d.duration_ms).toBeGreaterThan(0);
    }
    expect(record(r, 'hit-1').cached_tokens).toBeGreaterThan(1000);
    expect(record(r, 'miss-1').cached_tokens).toBe(0);

    // Filters.
    const doc = (await getJson(`${r.url}/admin/decisions?decision=cache_worker_queued`)) as AdminDecisions;
    expect(doc.decisions.map((d) => d.request_id)).toEqual(['queued-1']);
    expect(doc).toMatchObject({ capacity: 4096, recorded_total: 4, worker_queue_limit: LIMIT, block_size: 16 });
    const byWorker = (await getJson(`${r.url}/admin/decisions?worker=${encodeURIComponent(b)}`)) as AdminDecisions;
    expect(byWorker.decisions.map((d) => d.request_id)).toEqual(['queued-1', 'all-1'].filter((id) => record(r, id).worker === b));
    const since = (await getJson(`${r.url}/admin/decisions?since=${record(r, 'hit-1').seq}`)) as AdminDecisions;
    expect(since.decisions.map((d) => d.request_id)).toEqual(['queued-1', 'all-1']);

    // The stories, verbatim.
    const story = async (id: string): Promise<string> => {
      const res = await runCli(['explain', '--url', r.url, '--request', id]);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      return res.stdout;
    };
    const tail = (d: AdminDecision): string =>
      `engine:   status 200, reported ${d.cached_tokens} cached tokens, first byte after ${d.ttft_ms} ms, done after ${d.duration_ms} ms\n`;
    const head = (d: AdminDecision, label: string, reason: string): string =>
      `request ${d.request_id} at ${new Date(d.at_ms).toISOString()}: ${label} (policy cache_aware, reason ${reason})\n` +
      `prompt:   ${d.input_tokens} tokens, ${q} prefix blocks of about 16 tokens\n`;

    const m = record(r, 'miss-1');
    expect(await story('miss-1')).toBe(
      head(m, 'cache_miss', m.reason) +
        'owners:   none: no worker held any of this prefix\n' +
        `chose:    ${host(a)}, holding 0/${q} blocks: no worker held this prefix, so it went to the least loaded (cache_miss)\n` +
        tail(m),
    );
    const h = record(r, 'hit-1');
    expect(await story('hit-1')).toBe(
      head(h, 'cache_hit', h.reason) +
        `owners:   ${host(a)} held ${q}/${q} blocks, waiting 0: admitted\n` +
        `chose:    ${host(a)}, holding ${q}/${q} blocks: it held the prefix and the gate admitted it (cache_hit)\n` +
        tail(h),
    );
    const w = record(r, 'queued-1');
    expect(await story('queued-1')).toBe(
      head(w, 'cache_worker_queued', w.reason) +
        `owners:   ${host(a)} held ${q}/${q} blocks, waiting ${LIMIT}: gated (${LIMIT} ≥ limit ${LIMIT})\n` +
        `chose:    ${host(b)}, holding 0/${q} blocks: every owner of the prefix was at or over the queue limit ${LIMIT}, so the request went to the least loaded worker below it (cache_worker_queued)\n` +
        `gave up:  ${q} blocks: ${host(a)} held ${q}, gated; the diversion cost them\n` +
        tail(w),
    );
    const x = record(r, 'all-1');
    const owners = x.candidates
      .map(
        (c, i) =>
          `${i === 0 ? 'owners:   ' : '          '}${host(c.worker)} held ${c.matched_blocks}/${q} blocks, waiting ${c.waiting}: gated (${c.waiting} ≥ limit ${LIMIT})\n`,
      )
      .join('');
    expect(await story('all-1')).toBe(
      head(x, 'all_queued', x.reason) +
        owners +
        `chose:    ${host(x.worker)}, holding ${x.matched_blocks}/${q} blocks: every worker was at or over the queue limit ${LIMIT}: nowhere better to go, so affinity was kept (all_queued)\n` +
        (x.best_matched_blocks > x.matched_blocks
          ? `gave up:  ${x.best_matched_blocks - x.matched_blocks} blocks: ${host(x.best_worker!)} held ${x.best_matched_blocks}, not chosen\n`
          : '') +
        tail(x),
    );

    // --json is the record; an unknown id is one coded line.
    const json = await runCli(['explain', '--url', r.url, '--request', 'hit-1', '--json']);
    expect(JSON.parse(json.stdout)).toEqual(record(r, 'hit-1'));
    const none = await runCli(['explain', '--url', r.url, '--request', 'nope']);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      "error RCTL_E_NO_DECISION: no decision for request nope among the router's last 4; ids come from the x-request-id response header\n",
    );
    // Following: --once prints the recent ones, one line each.
    const lines = (await runCli(['explain', '--url', r.url, '--once'])).stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} queued-1  cache_worker_queued +→ ${host(b)} 0/${q} \\(best ${host(a)} ${q}\\) cached \\d+ ttft`,
      ),
    );
  }, 60_000);

  it('a ring of 0 records nothing and says so; the header still works', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls, { workerQueueLimit: LIMIT, decisionLogSize: 0, decisionHeader: 'on' }));
    const res = await send(r, 'x-1');
    expect(res.headers['x-router-decision']).toMatch(/^cache_miss; worker=w0; matched=0\/\d+; best=-; best_matched=0\/\d+$/);
    expect(r.decisionsDoc()).toMatchObject({ capacity: 0, recorded_total: 0, memory_bytes: 0, decisions: [] });
    const none = await runCli(['explain', '--url', r.url, '--request', 'x-1']);
    expect(none.stderr).toMatch(
      /^error RCTL_E_NO_DECISION: the router at http:\/\/127\.0\.0\.1:\d+ keeps no decisions \(--decision-log-size 0\)/,
    );
  });

  it('without --decision-header no decision header is sent and worker URLs never leave the router', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls, { workerQueueLimit: LIMIT }));
    const res = await send(r, 'y-1');
    expect(res.headers['x-router-decision']).toBeUndefined();
    expect(res.headers['x-request-id']).toBe('y-1');
    expect(JSON.stringify(res.headers)).not.toContain(fleet.urls[0]!.replace('http://', ''));
  });

  it('bad filters are a 400, and the admin token guards /admin/decisions', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls, { adminToken: 'sesame' }));
    const bad = await fetch(`${r.url}/admin/decisions?since=abc`, { headers: { authorization: 'Bearer sesame' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/since must be a whole number/);
    expect((await fetch(`${r.url}/admin/decisions`)).status).toBe(401);
    const cli = await runCli(['explain', '--url', r.url, '--once']);
    expect(cli.stderr).toMatch(/^error RCTL_E_UNAUTHORIZED: /);
  });
});

describe('routerctl doctor on a live router', () => {
  it('a gate set too low on a hot prefix: doctor names the gate diversions, live and from saved records', async () => {
    fleet = await startSimFleet({ workers: 5, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls, { workerQueueLimit: 1 }));
    // Each owner of the hot prefix is pinned at the limit as soon as it owns it, so every request is diverted.
    await send(r, 'p-0');
    for (let i = 1; i <= 4; i++) {
      await pin(r, { [record(r, `p-${i - 1}`).worker]: 1 });
      await send(r, `p-${i}`);
      expect(record(r, `p-${i}`).decision).toBe('cache_worker_queued');
    }
    const live = await runCli(['doctor', '--url', r.url]);
    expect(live.stderr).toBe('');
    expect(live.code).toBe(0);
    expect(live.stdout).toMatch(/^doctor: 5 requests analysed\n/);
    expect(live.stdout).toMatch(
      /findings:\n {2}gate diversions cost \d+\.\d % of prompt tokens \(4 requests sent away from their prefix owner\): raise --worker-queue-limit or add --saturation-queue-floor\n/,
    );
    const json = JSON.parse((await runCli(['doctor', '--url', r.url, '--json'])).stdout) as { dominant: string; requests: number };
    expect(json).toMatchObject({ dominant: 'gate_diversions', requests: 5 });
    // The same from records saved with explain.
    const saved = (await runCli(['explain', '--url', r.url, '--once', '--json', '--limit', '100'])).stdout;
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(`${tmpdir()}/routerctl-doctor-`);
    try {
      await writeFile(`${dir}/d.ndjson`, saved);
      const fromFile = JSON.parse((await runCli(['doctor', '--file', `${dir}/d.ndjson`, '--json'])).stdout) as { dominant: string };
      expect(fromFile.dominant).toBe('gate_diversions');
      await writeFile(`${dir}/bad.ndjson`, `${saved.split('\n')[0]}\nnot json\n`);
      const bad = await runCli(['doctor', '--file', `${dir}/bad.ndjson`]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/bad\.ndjson:2 is not JSON/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('routerctl doctor names the cause it was built to find', () => {
  const doctorOf = async (r: Router): Promise<{ dominant: string; ladder: Array<{ step: string; share: number }> }> =>
    JSON.parse((await runCli(['doctor', '--url', r.url, '--json'])).stdout) as {
      dominant: string;
      ladder: Array<{ step: string; share: number }>;
    };
  const shareOf = (d: { ladder: Array<{ step: string; share: number }> }, step: string): number =>
    d.ladder.find((s) => s.step === step)!.share;
  const chat = async (r: Router, id: string, system: string): Promise<AdminDecision> => {
    const body = JSON.stringify({
      model,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'go' },
      ],
      max_tokens: 2,
    });
    expect((await rawRequest(`${r.url}/v1/chat/completions`, { method: 'POST', body, headers: { 'x-request-id': id } })).status).toBe(200);
    return record(r, id);
  };

  it('an engine that keeps losing its cache (flushed, as by a restart) under an index built from requests: a stale index on that worker', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls, { workerQueueLimit: LIMIT }));
    const owner = (await chat(r, 's-0', PROMPT)).worker;
    const other = fleet.urls.find((u) => u !== owner)!;
    // The other worker serves a prompt of its own and reuses it, as a healthy engine does.
    await pin(r, { [owner]: LIMIT });
    const OTHER = 'Another team, another runbook. '.repeat(200);
    expect((await chat(r, 'o-0', OTHER)).worker).toBe(other);
    await pin(r, { [owner]: null });
    const engine = fleet.servers.find((s) => s.url === owner)!.engine;
    for (let i = 1; i <= 6; i++) {
      expect(engine.flushCache()).toBe(true);
      expect((await chat(r, `s-${i}`, PROMPT)).worker).toBe(owner);
      expect((await chat(r, `o-${i}`, OTHER)).worker).toBe(other);
    }
    const d = await doctorOf(r);
    expect(d.dominant).toBe('stale_index');
    // Half the traffic was the healthy worker's, reused: the flushed worker's loss is most of the rest.
    expect(shareOf(d, 'stale_index')).toBeGreaterThan(0.35);
    expect(shareOf(d, 'capacity') + shareOf(d, 'gate_diversions') + shareOf(d, 'routing_misses')).toBeLessThan(0.05);
  }, 60_000);

  it('a cold workload larger than the engines: prompts come back after they were evicted, so the loss is capacity, not routing', async () => {
    // Room for about one prompt per engine; eight distinct prompts, three times over.
    fleet = await startSimFleet({ workers: 2, speedup: 50, kvBlocks: 120 });
    const r = (router = await startTestRouter(fleet.urls, { workerQueueLimit: LIMIT }));
    const prompts = Array.from({ length: 8 }, (_, i) => `Runbook ${i}. `.repeat(3) + `Section ${i} of the operations manual. `.repeat(160));
    for (let round = 0; round < 3; round++) for (const [i, p] of prompts.entries()) await chat(r, `c-${round}-${i}`, p);
    const d = await doctorOf(r);
    // Held by nobody the first time round, then evicted (or no room where the prefix was): capacity, whichever is larger.
    expect(['not_held', 'capacity']).toContain(d.dominant);
    expect(shareOf(d, 'not_held') + shareOf(d, 'capacity')).toBeGreaterThan(0.9);
    expect(shareOf(d, 'gate_diversions') + shareOf(d, 'routing_misses') + shareOf(d, 'stale_index')).toBeLessThan(0.1);
  }, 60_000);
});
