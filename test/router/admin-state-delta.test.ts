import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { auditAdminDocument } from '../../src/contract/index.js';
import type { AdminState, WorkerFields } from '../../src/contract/index.js';
import { StateAssembler } from '../../src/fleet/state-assembler.js';
import { SseParser } from '../../src/fleet/sse.js';
import type { Router } from '../../src/router/index.js';
import { HistogramFamily } from '../../src/router/metrics/families.js';
import type { AdminStateParts, LatencyJson, WorkerPart } from '../../src/router/server/admin-state.js';
import { adminStateBody } from '../../src/router/server/admin-state.js';
import { JsonBuffer } from '../../src/router/server/json-buffer.js';
import { STREAM_EVENT_BYTES, StateDeltaEncoder } from '../../src/router/server/state-delta.js';
import { FieldsJson, workerFieldsJson } from '../../src/router/server/worker-fields-json.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';
import { workerFields } from '../helpers/worker-fields.js';

/**
 * /admin/state written from parts, and /admin/stream?delta=1 (docs/metrics-and-admin.md
 * §Stream deltas): the document is what JSON.stringify of the whole object would say,
 * and a stream of deltas applied by the console's assembler gives back, event by
 * event, the document the router would have sent whole.
 */

const fields = workerFields;

const TTFT = new HistogramFamily('ttft', '', ['worker'], [0.1, 0.5]);
const DURATION = new HistogramFamily('duration', '', ['worker'], [1]);
let series = 0;

/** Histograms with `count` observations, `over` of them above the last bound, read as the router reads a worker's. */
const latency = (count: number, over = 0): LatencyJson => {
  const labels = [`series-${series++}`];
  for (let i = 0; i < count; i++) {
    TTFT.observe(labels, i < over ? 0.9 : 0.05);
    DURATION.observe(labels, i < over ? 2 : 0.5);
  }
  const readings = { ttft_seconds: TTFT.reading(labels), duration_seconds: DURATION.reading(labels) };
  const text = `{"ttft_seconds":${readings.ttft_seconds.json()},"duration_seconds":${readings.duration_seconds.json()}}`;
  return { ttftCount: count, durationCount: count, text, bytes: Buffer.from(text), readings };
};

/** Parts as the router builds them: the fields' JSON object shared while they stand, as its caches do. */
function parts(clock: number, workers: Array<{ f: WorkerFields; lat: LatencyJson }>, head: Partial<AdminState> = {}): AdminStateParts {
  const built: WorkerPart[] = workers.map(({ f, lat }) => {
    return {
      fields: f,
      json: new FieldsJson(f),
      sampleAgeMs: f.sample_at_ms === null ? null : clock - f.sample_at_ms,
      latency: lat,
    };
  });
  return {
    head: {
      router: { version: 'x', policy: 'cache_aware', uptime_s: clock / 1000 } as AdminState['router'],
      decisions: { cache_hit: 1, cache_miss: 0, cache_worker_queued: 0, all_queued: 0 },
      events: [],
      timestamp_ms: 1_700_000_000_000 + clock,
      ...head,
    } as AdminStateParts['head'],
    workers: built,
    sampleClockMs: clock,
  };
}

describe('the worker entry, written field by field', () => {
  it('is what JSON.stringify writes, nulls, errors, non-ASCII and nested feeds included', () => {
    const variants: WorkerFields[] = [
      fields('http://a'),
      fields('http://b', { waiting: null, running: null, kv_usage: null, sample_at_ms: null, fresh: false, breaker: 'half_open' }),
      fields('http://c', {
        load_poll_failures_total: 3,
        load_poll_failures: { connect: 1, http_status: 0, timeout: 2, too_large: 0, unreadable: 0 },
        last_poll_error: { reason: 'timeout', message: 'no answer "within" 1000 ms — ünïcode', at_ms: 1_767_225_600_000 },
        kv_usage: Number.NaN,
        dp_size: 4,
      }),
      fields('http://d', {
        load_source: 'push',
        load_push: {
          endpoints: ['tcp://x:1'],
          frames_total: 9,
          decode_errors_total: 0,
          missed_total: 1,
          resets_total: 0,
          last_error: null,
        },
      }),
    ];
    for (const f of variants) expect(workerFieldsJson(f)).toBe(JSON.stringify(f));
  });
});

describe('the document buffer', () => {
  it('writes numbers as JSON does, and grows past its first size', () => {
    const values = [0, 7, 10, 12345, 1_767_225_600_000, Number.MAX_SAFE_INTEGER, -1, 1.5, 2 ** 60, Number.NaN, Infinity, null];
    const out = new JsonBuffer(1);
    values.forEach((v, i) => {
      if (i > 0) out.byte(0x2c);
      out.number(v);
    });
    out.text(',"ünï"');
    expect(out.done().toString()).toBe(`${values.map((v) => JSON.stringify(v)).join(',')},"ünï"`);
  });
});

describe('deltas, encoded by the router and applied by the console', () => {
  it('give back every document in turn: changes, latency, additions, removals, order, head fields', () => {
    const enc = new StateDeltaEncoder();
    const asm = new StateAssembler();
    const l0 = latency(0);
    let a = fields('http://a');
    const b = fields('http://b', { sample_at_ms: null, fresh: false, waiting: null, running: null });
    const c = fields('http://c');
    const steps: AdminStateParts[] = [
      parts(2_000, [
        { f: a, lat: l0 },
        { f: b, lat: l0 },
      ]),
      // Nothing but time: ages move, the delta carries none of them.
      parts(2_500, [
        { f: a, lat: l0 },
        { f: b, lat: l0 },
      ]),
      // A new sample on a, a request finished on b, a third worker joins.
      parts(3_000, [
        { f: (a = fields('http://a', { sample_at_ms: 2_900, waiting: 4 })), lat: l0 },
        { f: b, lat: latency(1) },
        { f: c, lat: l0 },
      ]),
      // b leaves, c moves to the front, a head field changes.
      parts(
        3_500,
        [
          { f: fields('http://c', { gated: true }), lat: latency(3, 1) },
          { f: a, lat: l0 },
        ],
        {
          decisions: { cache_hit: 2, cache_miss: 0, cache_worker_queued: 0, all_queued: 0 },
        },
      ),
    ];
    const sizes: number[] = [];
    steps.forEach((p, i) => {
      const ev = enc.next(p, adminStateBody);
      expect(ev.event).toBe(i === 0 ? 'state' : 'state_delta');
      const data = JSON.parse(ev.data.toString()) as unknown;
      sizes.push(ev.data.length);
      // A changed worker's histograms go as what they gained, not whole.
      if (i >= 2) expect(ev.data.toString()).toMatch(/"latency_added":\{"ttft_seconds":\{"added":\[\[/);
      const doc = i === 0 ? asm.whole(data) : asm.delta(data);
      expect(doc, `step ${i}`).toEqual(JSON.parse(adminStateBody(p).toString()));
    });
    // The quiet step sends no worker at all.
    expect(sizes[1]).toBeLessThan(sizes[0]! / 2);
    expect((JSON.parse(enc.next(steps[3]!, adminStateBody).data.toString()) as { workers: unknown[] }).workers).toEqual([]);
  });

  it('a few new samples ride in their workers; when a quarter of the fleet has one, they go as one column', () => {
    const urls = Array.from({ length: 8 }, (_, i) => `http://w${i}`);
    const at = (moved: number, t: number) =>
      urls.map((u, i) => ({ f: fields(u, { sample_at_ms: i < moved ? t : 1_000 }), lat: latency(0) }));
    const enc = new StateDeltaEncoder();
    const asm = new StateAssembler();
    const steps = [parts(2_000, at(0, 0)), parts(2_500, at(1, 2_400)), parts(3_000, at(8, 2_900))];
    const deltas = steps.map((p, i) => {
      const ev = enc.next(p, adminStateBody);
      const data = JSON.parse(ev.data.toString()) as { workers?: Array<Record<string, unknown>>; sample_at_ms?: unknown };
      expect(i === 0 ? asm.whole(data) : asm.delta(data), `step ${i}`).toEqual(JSON.parse(adminStateBody(p).toString()));
      return data;
    });
    expect(deltas[1]!.workers).toEqual([{ url: 'http://w0', sample_at_ms: 2_400 }]);
    expect(deltas[1]!.sample_at_ms).toBeUndefined();
    expect(deltas[2]!.workers).toEqual([]);
    expect(deltas[2]!.sample_at_ms).toEqual(urls.map(() => 2_900));
  });

  it('past its budget an event carries state changes first, the rest in turn, and none waits for ever', () => {
    // 200 workers whose counters all move every event; room for some 90 of them an event.
    const urls = Array.from({ length: 200 }, (_, i) => `http://worker-${String(i).padStart(3, '0')}`);
    const budget = 24_000;
    const enc = new StateDeltaEncoder(budget);
    const asm = new StateAssembler();
    const step = (t: number, broken?: string) =>
      parts(
        1_000 + t * 1_000,
        urls.map((u) => ({
          f: fields(u, {
            requests_total: t,
            inflight: t % 3,
            // Non-ASCII in every patch: the budget is in bytes as sent, not characters.
            last_poll_error: { reason: 'timeout', message: `keine Antwort — äöü ${t}`, at_ms: t },
            ...(u === broken ? { breaker: 'open' as const, healthy: false } : {}),
          }),
          lat: latency(t),
        })),
      );
    const lastSeen = new Map<string, number>();
    let doc: Record<string, unknown> | undefined;
    // At step 5 a worker breaks while every counter churns: the first one step 4 sent, whose turn is furthest off.
    let broken: string | undefined;
    for (let t = 0; t <= 8; t++) {
      const p = step(t, t >= 5 ? broken : undefined);
      const ev = enc.next(p, adminStateBody);
      const data = JSON.parse(ev.data.toString()) as { workers: Array<{ url: string }>; deferred?: number };
      doc = t === 0 ? asm.whole(data) : asm.delta(data);
      expect(doc, `step ${t}`).toBeDefined();
      if (t === 0) {
        // The whole document is past the budget too: the rest of it follows before the churn.
        while (enc.catchingUp) doc = asm.delta(JSON.parse(enc.next(p, adminStateBody).data.toString()));
        expect(doc).toEqual(JSON.parse(adminStateBody(p).toString()));
        continue;
      }
      expect(Buffer.byteLength(ev.data), `step ${t}`).toBeLessThanOrEqual(budget);
      expect(data.deferred, `step ${t}`).toBe(200 - data.workers.length);
      // What the console says is behind (src/fleet/state-assembler.ts).
      expect(asm.behind, `step ${t}`).toBe(data.deferred);
      const workers = doc!.workers as Array<{ url: string; breaker: string; requests_total: number }>;
      // The breaker is in the console the event it opened, not when its turn comes.
      if (t === 4) broken = data.workers[0]!.url;
      if (t === 5) {
        expect(workers.find((w) => w.url === broken)!.breaker).toBe('open');
      }
      for (const w of workers) if (w.requests_total === t) lastSeen.set(w.url, t);
      // In turn: every worker's counters are at most three events behind.
      for (const w of workers) expect(t - w.requests_total, `${w.url} at step ${t}`).toBeLessThanOrEqual(3);
    }
    expect(lastSeen.size).toBe(200);
    // Once the traffic stops, the deferred ones catch up and the document is whole again.
    let last = step(8, broken);
    for (let i = 0; i < 4; i++) doc = asm.delta(JSON.parse(enc.next(last, adminStateBody).data.toString()));
    expect(doc).toEqual(JSON.parse(adminStateBody(last).toString()));
    last = step(8, broken);
    expect((JSON.parse(enc.next(last, adminStateBody).data.toString()) as { deferred?: number }).deferred).toBeUndefined();
    expect(asm.behind).toBe(0);
  });

  it('a document past the budget goes out over events that follow at once: the head and the first workers, then the rest in order', () => {
    const urls = Array.from({ length: 120 }, (_, i) => `http://worker-${String(i).padStart(3, '0')}`);
    const budget = 24_000;
    const enc = new StateDeltaEncoder(budget);
    const asm = new StateAssembler();
    const at = (clock: number, list: readonly string[], head: Partial<AdminState> = {}) =>
      parts(
        clock,
        list.map((u) => ({ f: fields(u), lat: latency(2, 1) })),
        head,
      );
    /** Events until the encoder has sent every worker: each within the budget, each saying how many are still to come. */
    const drain = (p: AdminStateParts): Record<string, unknown> => {
      let doc: Record<string, unknown> | undefined;
      let events = 0;
      while (enc.catchingUp) {
        const ev = enc.next(p, adminStateBody);
        expect(ev.event).toBe('state_delta');
        expect(Buffer.byteLength(ev.data)).toBeLessThanOrEqual(budget);
        const data = JSON.parse(ev.data.toString()) as { deferred?: number };
        doc = asm.delta(data);
        const have = (doc!.workers as unknown[]).length;
        expect(data.deferred ?? 0).toBe(p.workers.length - have);
        expect(asm.behind).toBe(data.deferred ?? 0);
        events++;
      }
      expect(events).toBeGreaterThan(1);
      return doc!;
    };

    const p0 = at(1_000, urls);
    const first = enc.next(p0, adminStateBody);
    expect(first.event).toBe('state');
    expect(Buffer.byteLength(first.data)).toBeLessThanOrEqual(budget);
    const head = asm.whole(JSON.parse(first.data.toString()))!;
    const sent = (head.workers as Array<{ url: string }>).map((w) => w.url);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent).toEqual(urls.slice(0, sent.length));
    expect(enc.catchingUp).toBe(true);
    // Meanwhile a worker already sent leaves, so does one still to come, and a head field changes.
    const left = [urls[5]!, urls[119]!];
    const p1 = at(
      1_100,
      urls.filter((u) => !left.includes(u)),
      { decisions: { cache_hit: 9, cache_miss: 0, cache_worker_queued: 0, all_queued: 0 } },
    );
    expect(drain(p1)).toEqual(JSON.parse(adminStateBody(p1).toString()));
    // Sixty workers join at once (a discovery round): more than an event's joins, so they too come over events.
    const joined = Array.from({ length: 60 }, (_, i) => `http://zz-joined-${String(i).padStart(2, '0')}`);
    const p2 = at(1_200, [...urls.filter((u) => !left.includes(u)), ...joined]);
    const delta = enc.next(p2, adminStateBody);
    expect(Buffer.byteLength(delta.data)).toBeLessThanOrEqual(budget);
    asm.delta(JSON.parse(delta.data.toString()));
    expect(enc.catchingUp).toBe(true);
    expect(drain(p2)).toEqual(JSON.parse(adminStateBody(p2).toString()));
    // Whole again: the next event is an ordinary delta with nothing to send.
    const quiet = JSON.parse(enc.next(p2, adminStateBody).data.toString()) as { workers: unknown[]; deferred?: number };
    expect(quiet.workers).toEqual([]);
    expect(quiet.deferred).toBeUndefined();
  });

  it('a delta without a whole document first is refused, so the client reconnects', () => {
    expect(new StateAssembler().delta({ set: {}, workers: [], removed: [], sample_clock_ms: 0 })).toBeUndefined();
  });
});

const TOKEN = 'delta-secret';
const auth = { authorization: `Bearer ${TOKEN}` };
let fleets: SimFleet[] = [];
let router: Router | undefined;
let closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await router?.close();
  for (const f of fleets) await f.close();
  for (const close of closers) await close();
  router = undefined;
  fleets = [];
  closers = [];
});

/** Events of /admin/stream as they come, parsed. */
async function* events(url: string, signal: AbortSignal): AsyncGenerator<{ event: string; data: string }> {
  const res = await fetch(url, { headers: auth, signal });
  expect(res.status).toBe(200);
  const parser = new SseParser();
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) for (const ev of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) yield ev;
}

describe('/admin/stream?delta=1 against a live router', () => {
  it('the first event is the whole state, later ones deltas; applied, they track /admin/state through traffic and membership', async () => {
    const f = await startSimFleet({ workers: 3, speedup: 100 });
    fleets.push(f);
    const [a, b, c] = f.urls as [string, string, string];
    const r = (router = await startTestRouter([a, b], { adminToken: TOKEN }));
    const ctl = new AbortController();
    const stream = events(`${r.url}/admin/stream?interval_ms=100&delta=1`, ctl.signal);
    const asm = new StateAssembler();
    const next = async (): Promise<AdminState> => {
      for (;;) {
        const ev = (await stream.next()).value!;
        if (ev.event === 'state') return asm.whole(JSON.parse(ev.data)) as unknown as AdminState;
        if (ev.event === 'state_delta') return asm.delta(JSON.parse(ev.data)) as unknown as AdminState;
      }
    };
    try {
      const first = await next();
      expect(auditAdminDocument(first)).toEqual({ unknown: [], missing: [] });

      expect(
        (
          await rawRequest(`${r.url}/admin/workers`, {
            method: 'POST',
            body: JSON.stringify({ url: c }),
            headers: { ...auth, 'content-type': 'application/json' },
          })
        ).status,
      ).toBeLessThan(300);
      expect(
        (await rawRequest(`${r.url}/admin/workers?url=${encodeURIComponent(a)}`, { method: 'DELETE', headers: auth })).status,
      ).toBeLessThan(300);

      const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'none', maxRetries: 0 });
      for (let i = 0; i < 4; i++)
        await client.chat.completions.create({
          model: 'sim-llama-3.1-8b',
          messages: [{ role: 'user', content: `hi ${i}` }],
          max_tokens: 2,
        });
      // The assembled document catches up with what the router says whole.
      const whole = JSON.parse((await rawRequest(`${r.url}/admin/state`, { headers: auth })).text) as AdminState;
      const doc = await eventually(async () => {
        const d = await next();
        return (
          d.requests_total === whole.requests_total && d.workers.map((w) => w.url).join() === whole.workers.map((w) => w.url).join() && d
        );
      });
      expect(auditAdminDocument(doc)).toEqual({ unknown: [], missing: [] });
      expect(doc.workers.map((w) => w.url)).toEqual([b, c]);
      expect(doc.workers.reduce((n, w) => n + w.requests_total, 0)).toBe(4);
      // Ages are worked out from the sample's time and the delta's clock, as the router works them out.
      for (const w of doc.workers) if (w.sample_at_ms !== null) expect(w.sample_age_ms).toBeGreaterThanOrEqual(0);
      const now = await next();
      const direct = JSON.parse((await rawRequest(`${r.url}/admin/state`, { headers: auth })).text) as AdminState;
      for (const w of now.workers) {
        const d = direct.workers.find((x) => x.url === w.url)!;
        expect(w.latency).toEqual(d.latency);
        expect(w.requests_total).toBe(d.requests_total);
        if (w.sample_at_ms !== null && w.sample_at_ms === d.sample_at_ms)
          expect(Math.abs(w.sample_age_ms! - d.sample_age_ms!)).toBeLessThan(1_000);
      }
    } finally {
      ctl.abort();
      await stream.return(undefined).catch(() => undefined);
    }
  });

  it('a fleet of more workers than the stream reads at a turn of the loop: every worker once, in order, with what it served', async () => {
    // Three engines at the first, a middle and the last of 600 places; the rest servers
    // held for the test that close every connection unanswered: unreachable workers, in
    // the document all the same. (Ports let go instead would be free for other tests'
    // servers to take.)
    const f = await startSimFleet({ workers: 3, speedup: 100 });
    fleets.push(f);
    const silent = await Promise.all(
      Array.from(
        { length: 597 },
        () =>
          new Promise<Server>((ok) => {
            const s = createServer((socket) => socket.destroy());
            s.listen(0, '127.0.0.1', () => ok(s));
          }),
      ),
    );
    closers.push(() => Promise.all(silent.map((s) => new Promise((ok) => s.close(ok)))));
    const silentUrls = silent.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`);
    const urls = [f.urls[0]!, ...silentUrls.slice(0, 300), f.urls[1]!, ...silentUrls.slice(300), f.urls[2]!];
    const r = (router = await startTestRouter(urls, { adminToken: TOKEN, loadPollIntervalMs: 250 }));
    // Every configured worker is in the pool at start; the silent ones leave it once their polls go unanswered.
    await eventually(async () => r.state().workers.filter((w) => w.load_unreachable).length === 597, 15_000);
    const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'none', maxRetries: 0 });
    for (let i = 0; i < 6; i++)
      await client.chat.completions.create({
        model: 'sim-llama-3.1-8b',
        messages: [{ role: 'user', content: `slice ${i}` }],
        max_tokens: 2,
      });
    const ctl = new AbortController();
    // A tick a minute: only the events that follow the first at once can arrive within the test.
    const stream = events(`${r.url}/admin/stream?interval_ms=60000&delta=1`, ctl.signal);
    try {
      // The whole document (some 800 KB) is past an event's budget: the first event holds the head and the first workers.
      const ev = (await stream.next()).value!;
      expect(ev.event).toBe('state');
      expect(Buffer.byteLength(ev.data)).toBeLessThanOrEqual(STREAM_EVENT_BYTES);
      const doc = JSON.parse(ev.data) as AdminState;
      expect(auditAdminDocument(doc)).toEqual({ unknown: [], missing: [] });
      expect(doc.requests_total).toBe(6);
      expect(doc.workers.length).toBeLessThan(urls.length);
      expect(doc.workers.map((w) => w.url)).toEqual(urls.slice(0, doc.workers.length));
      // The rest come in the events that follow at once, each compared and written a slice at a time, until none is deferred.
      const asm = new StateAssembler();
      let after = asm.whole(JSON.parse(ev.data)) as unknown as AdminState;
      let deferred: number | undefined = urls.length - doc.workers.length;
      while (deferred !== undefined) {
        const delta = (await stream.next()).value!;
        expect(delta.event).toBe('state_delta');
        expect(Buffer.byteLength(delta.data)).toBeLessThanOrEqual(STREAM_EVENT_BYTES);
        const data = JSON.parse(delta.data) as { deferred?: number };
        after = asm.delta(data) as unknown as AdminState;
        expect(data.deferred ?? 0).toBe(urls.length - after.workers.length);
        deferred = data.deferred;
      }
      const direct = JSON.parse((await rawRequest(`${r.url}/admin/state`, { headers: auth })).text) as AdminState;
      expect(after.workers.map((w) => w.url)).toEqual(urls);
      expect(after.workers.map((w) => w.requests_total)).toEqual(direct.workers.map((w) => w.requests_total));
      const served = [0, 301, 599].map((i) => after.workers[i]!.requests_total);
      expect(served.reduce((a, b) => a + b, 0)).toBe(6);
    } finally {
      ctl.abort();
      await stream.return(undefined).catch(() => undefined);
    }
  });

  it('without delta=1 every event is the whole state, as before', async () => {
    const f = await startSimFleet({ workers: 1, speedup: 100 });
    fleets.push(f);
    const r = (router = await startTestRouter(f.urls, { adminToken: TOKEN }));
    const ctl = new AbortController();
    const stream = events(`${r.url}/admin/stream?interval_ms=100`, ctl.signal);
    try {
      for (let i = 0; i < 3; i++) {
        const ev = (await stream.next()).value!;
        expect(ev.event).toBe('state');
        expect(auditAdminDocument(JSON.parse(ev.data))).toEqual({ unknown: [], missing: [] });
      }
    } finally {
      ctl.abort();
      await stream.return(undefined).catch(() => undefined);
    }
  });
});
