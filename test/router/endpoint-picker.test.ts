import { credentials, makeGenericClientConstructor, Metadata } from '@grpc/grpc-js';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { extProcServices as services } from '../../src/router/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * The endpoint picker's side of Envoy's ext_proc protocol, driven by a gRPC client over
 * real HTTP/2 (docs/endpoint-picker.md): what it answers, when, and what it books. The
 * wire itself is proven against the real Envoy in test/peers/envoy-epp.test.ts; these
 * run on a machine with only Node.
 */
let fleet: SimFleet | undefined;
let router: Router | undefined;

afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = undefined;
  fleet = undefined;
});

type Msg = Record<string, unknown>;

async function picker(overrides: Parameters<typeof startTestRouter>[1] = {}): Promise<{ r: Router; addr: string }> {
  fleet = await startSimFleet({ workers: 2, speedup: 50 });
  router = await startTestRouter(fleet.urls, { epp: 0, ...overrides });
  await eventually(async () => router!.state().workers.every((w) => w.healthy), 5000, 20);
  return { r: router, addr: router.eppAddress! };
}

/** One ext_proc stream: send messages, read answers in order. */
function stream(addr: string): { call: ClientDuplexStream<Msg, Msg>; next: () => Promise<Msg>; received: () => number; close: () => void } {
  const { extProc } = services();
  const Client = makeGenericClientConstructor(extProc, 'ExternalProcessor');
  const client = new Client(addr, credentials.createInsecure());
  const call = (client as unknown as { Process: (m: Metadata) => ClientDuplexStream<Msg, Msg> }).Process(new Metadata());
  const queue: Msg[] = [];
  let received = 0;
  const waiters: Array<(m: Msg) => void> = [];
  call.on('data', (m: Msg) => {
    received++;
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  call.on('error', () => undefined);
  return {
    call,
    next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiters.push(resolve))),
    received: () => received,
    close: () => client.close(),
  };
}

const headers = (h: Record<string, string>, endOfStream = false): Msg => ({
  request_headers: {
    headers: { headers: Object.entries(h).map(([key, v]) => ({ key, raw_value: Buffer.from(v) })) },
    end_of_stream: endOfStream,
  },
});
/** Chat request headers with the gateway's subset hint (envoy.lb.subset_hint). */
const hinted = (endpoints: string[]): Msg => ({
  ...headers(POST_CHAT),
  metadata_context: {
    filter_metadata: {
      'envoy.lb.subset_hint': {
        fields: { 'x-gateway-destination-endpoint-subset': { listValue: { values: endpoints.map((e) => ({ stringValue: e })) } } },
      },
    },
  },
});
const POST_CHAT = { ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json' };
const chatBody = (content: string, extra: object = {}): Buffer =>
  Buffer.from(JSON.stringify({ model: 'sim-llama-3.1-8b', messages: [{ role: 'user', content }], max_tokens: 2, ...extra }));

const headerOf = (m: Msg, name: string): string | undefined => {
  const set = (
    ((m.request_headers as Msg)?.response as Msg)?.header_mutation as { set_headers: Array<{ header: { key: string; raw_value: Buffer } }> }
  )?.set_headers;
  const h = set?.find((x) => x.header.key === name);
  return h === undefined ? undefined : Buffer.from(h.header.raw_value).toString();
};

describe('the endpoint picker on the ext_proc stream', () => {
  it('holds the headers answer until the body is whole, then names the engine in the header and the envoy.lb metadata, and streams the body back as it came', async () => {
    const { addr } = await picker();
    const s = stream(addr);
    s.call.write(headers(POST_CHAT));
    const body = chatBody('hello picker');
    s.call.write({ request_body: { body: body.subarray(0, 10), end_of_stream: false } });
    // Nothing is answered before the body ends: the pick needs it.
    await new Promise((r) => setTimeout(r, 200));
    expect(s.received()).toBe(0);
    s.call.write({ request_body: { body: body.subarray(10), end_of_stream: true } });
    const h = await s.next();
    const endpoint = headerOf(h, 'x-gateway-destination-endpoint');
    expect(fleet!.urls.map((u) => new URL(u).host)).toContain(endpoint);
    expect((h.request_headers as Msg).response).toMatchObject({ clear_route_cache: true });
    const lb = (h.dynamic_metadata as { fields: Record<string, { structValue: { fields: Record<string, { stringValue: string }> } }> })
      .fields['envoy.lb']!;
    expect(lb.structValue.fields['x-gateway-destination-endpoint']!.stringValue).toBe(endpoint);
    const b = await s.next();
    const streamed = (((b.request_body as Msg).response as Msg).body_mutation as Msg).streamed_response as {
      body: Buffer;
      end_of_stream: boolean;
    };
    expect(Buffer.from(streamed.body).equals(body)).toBe(true);
    expect(streamed.end_of_stream).toBe(true);
    s.call.end();
    s.close();
  });

  it('watches the response pass: each chunk echoed, and the decision record gets its status, TTFT and the engine-reported cached tokens', async () => {
    const { r, addr } = await picker();
    const s = stream(addr);
    s.call.write(headers({ ...POST_CHAT, 'x-request-id': 'epp-watch-1' }));
    s.call.write({ request_body: { body: chatBody('watch me', { stream: true }), end_of_stream: true } });
    await s.next();
    await s.next();
    s.call.write({ response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] }, end_of_stream: false } });
    const rh = await s.next();
    // The router's response headers go back through Envoy's response-headers answer.
    const set = (
      ((rh.response_headers as Msg).response as Msg).header_mutation as {
        set_headers: Array<{ header: { key: string; raw_value: Buffer } }>;
      }
    ).set_headers;
    expect(set.map((x) => [x.header.key, Buffer.from(x.header.raw_value).toString()])).toContainEqual(['x-request-id', 'epp-watch-1']);
    const chunks = [
      'data: {"choices":[{"delta":{"content":"a"}}]}\n\n',
      'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":7}}}\n\n',
      'data: [DONE]\n\n',
    ];
    for (const [i, c] of chunks.entries()) {
      s.call.write({ response_body: { body: Buffer.from(c), end_of_stream: i === chunks.length - 1 } });
      const echoed = (((await s.next()).response_body as Msg).response as Msg).body_mutation as {
        streamed_response: { body: Buffer; end_of_stream: boolean };
      };
      expect(Buffer.from(echoed.streamed_response.body).toString()).toBe(c);
      expect(echoed.streamed_response.end_of_stream).toBe(i === chunks.length - 1);
    }
    s.call.end();
    const rec = await eventually(
      async () => r.decisionsDoc().decisions.find((d) => d.request_id === 'epp-watch-1' && d.status !== null),
      3000,
    );
    expect(rec).toMatchObject({ status: 200, cached_tokens: 7 });
    expect(rec.ttft_ms).toBeGreaterThanOrEqual(0);
    // Booked as a success on the worker, nothing left in flight.
    expect(r.state().workers.reduce((n, w) => n + w.inflight, 0)).toBe(0);
    expect(r.inflight).toBe(0);
    const metrics = (await rawRequest(`${r.url}/metrics`)).text;
    expect(metrics).toMatch(/sgl_router_worker_requests_total\{[^}]*outcome="success"[^}]*\} 1/);
    // The pick's own time, from the body's end to the answer.
    expect(metrics).toMatch(/^sgl_router_epp_pick_duration_seconds_count 1$/m);
    s.close();
  });

  it('a served 2xx teaches the requests index: the next request of the prefix is a cache_hit on the worker that served the first', async () => {
    // No predicted entries (docs/routing.md §The event gap): only the served response can teach the index.
    const { r, addr } = await picker({ prefixSource: 'requests', cacheAffinityMinMatchedTokens: 64, predictedPrefixTtlMs: 0 });
    const system = (tag: string): string => Array.from({ length: 40 }, (_, i) => `${tag} rule ${i} keeps the prefix warm.`).join(' ');
    const ask = async (tag: string, n: number, id: string): Promise<string> => {
      const s = stream(addr);
      s.call.write(headers({ ...POST_CHAT, 'x-request-id': id }));
      const body = Buffer.from(
        JSON.stringify({
          model: 'sim-llama-3.1-8b',
          messages: [
            { role: 'system', content: system(tag) },
            { role: 'user', content: `q${n}` },
          ],
        }),
      );
      s.call.write({ request_body: { body, end_of_stream: true } });
      const endpoint = headerOf(await s.next(), 'x-gateway-destination-endpoint')!;
      await s.next();
      s.call.write({ response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] } } });
      await s.next();
      s.call.write({ response_body: { body: Buffer.from('{"choices":[]}'), end_of_stream: true } });
      await s.next();
      s.call.end();
      s.close();
      return endpoint;
    };
    for (const tag of ['alpha', 'beta', 'gamma', 'delta']) {
      const first = await ask(tag, 1, `${tag}-1`);
      const second = await ask(tag, 2, `${tag}-2`);
      expect(second).toBe(first);
      const rec = await eventually(async () => r.decisionsDoc().decisions.find((d) => d.request_id === `${tag}-2`), 3000);
      expect(rec, JSON.stringify(rec)).toMatchObject({ decision: 'cache_hit' });
      expect(rec.matched_blocks).toBeGreaterThan(0);
    }
  });

  it('a stream Envoy abandons frees everything it held: the worker is out of flight and the request booked cancelled', async () => {
    const { r, addr } = await picker();
    const s = stream(addr);
    s.call.write(headers(POST_CHAT));
    s.call.write({ request_body: { body: chatBody('abandon me', { stream: true }), end_of_stream: true } });
    await s.next();
    await s.next();
    expect(r.state().workers.reduce((n, w) => n + w.inflight, 0)).toBe(1);
    expect(r.inflight).toBe(1);
    s.call.write({ response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] } } });
    await s.next();
    s.call.cancel();
    await eventually(async () => r.inflight === 0 && r.state().workers.every((w) => w.inflight === 0), 3000);
    const metrics = (await rawRequest(`${r.url}/metrics`)).text;
    expect(metrics).toMatch(/sgl_router_worker_requests_total\{[^}]*outcome="cancelled"[^}]*\} 1/);
    s.close();
  });

  it.each([
    ['malformed JSON', Buffer.from('{"model":'), 400, 'bad_request'],
    [
      'a model it does not serve',
      Buffer.from(JSON.stringify({ model: 'other', messages: [{ role: 'user', content: 'x' }] })),
      404,
      'model_not_found',
    ],
  ])('answers %s itself, with the router error envelope as an immediate response', async (_name, body, status, code) => {
    const { addr } = await picker();
    const s = stream(addr);
    s.call.write(headers(POST_CHAT));
    s.call.write({ request_body: { body, end_of_stream: true } });
    const m = (await s.next()).immediate_response as {
      status: { code: number };
      body: Buffer;
      headers: { set_headers: Array<{ header: { key: string; raw_value: Buffer } }> };
    };
    expect(m.status.code).toBe(status);
    expect(JSON.parse(Buffer.from(m.body).toString())).toMatchObject({ error: { code } });
    expect(m.headers.set_headers.map((x) => [x.header.key, Buffer.from(x.header.raw_value).toString()])).toContainEqual([
      'x-router-error-code',
      code,
    ]);
    s.close();
  });

  it('refuses a body over --max-body-bytes as soon as it passes the limit (413)', async () => {
    const { addr } = await picker({ maxBodyBytes: 1000 });
    const s = stream(addr);
    s.call.write(headers(POST_CHAT));
    s.call.write({ request_body: { body: Buffer.alloc(800, 0x20), end_of_stream: false } });
    s.call.write({ request_body: { body: Buffer.alloc(800, 0x20), end_of_stream: false } });
    const m = (await s.next()).immediate_response as { status: { code: number } };
    expect(m.status.code).toBe(413);
    s.close();
  });

  it('picks inside a subset hint, and answers 503 when no endpoint of the hint is in the fleet', async () => {
    const { addr } = await picker();
    const only = new URL(fleet!.urls[1]!).host;
    for (let i = 0; i < 4; i++) {
      const s = stream(addr);
      s.call.write(hinted([only]));
      s.call.write({ request_body: { body: chatBody(`subset ${i}`), end_of_stream: true } });
      expect(headerOf(await s.next(), 'x-gateway-destination-endpoint')).toBe(only);
      s.call.cancel();
      s.close();
    }
    const s = stream(addr);
    s.call.write(hinted(['10.9.9.9:1']));
    s.call.write({ request_body: { body: chatBody('nowhere'), end_of_stream: true } });
    const m = (await s.next()).immediate_response as { status: { code: number } };
    expect(m.status.code).toBe(503);
    s.close();
  });

  it('sends a request without a body (GET /v1/models) to a routable engine, unbooked', async () => {
    const { r, addr } = await picker();
    const s = stream(addr);
    s.call.write(headers({ ':method': 'GET', ':path': '/v1/models' }, true));
    const endpoint = headerOf(await s.next(), 'x-gateway-destination-endpoint');
    expect(fleet!.urls.map((u) => new URL(u).host)).toContain(endpoint);
    expect(r.decisionsDoc().decisions).toHaveLength(0);
    s.close();
  });

  it('answers gRPC health: liveness always, readiness and the ext_proc service while it can route, NOT_FOUND for others', async () => {
    const { r, addr } = await picker();
    const { health } = services();
    const Client = makeGenericClientConstructor(health, 'Health');
    const client = new Client(addr, credentials.createInsecure()) as unknown as {
      Check: (req: { service: string }, cb: (err: { code: number } | null, res?: { status: number }) => void) => void;
      close: () => void;
    };
    const check = (service: string): Promise<number | string> =>
      new Promise((resolve) => client.Check({ service }, (err, res) => resolve(err ? `error ${err.code}` : res!.status)));
    expect(await check('liveness')).toBe(1);
    expect(await check('readiness')).toBe(1);
    expect(await check('envoy.service.ext_proc.v3.ExternalProcessor')).toBe(1);
    expect(await check('')).toBe(1);
    expect(await check('something.else')).toBe('error 5');
    // Every engine gone: not ready, still live.
    await fleet!.close();
    fleet = undefined;
    await eventually(async () => (await check('readiness')) === 2, 10_000, 50);
    expect(await check('liveness')).toBe(1);
    expect(r.state().workers.every((w) => !w.healthy)).toBe(true);
    client.close();
  });
});
