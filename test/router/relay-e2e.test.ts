/**
 * The relay's handling of response bodies, end to end through the real router
 * (docs/http-edge.md §Relay): the worker's socket is read no faster than the client
 * drains; an informational 1xx is not the answer; a long failure body is dropped
 * with its connection rather than read; a client that leaves mid-body frees the
 * worker's connection; a body sent in many chunks reaches the worker intact; a kept
 * connection the worker closes while idle costs the client nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import OpenAI from 'openai';
import type { Router } from '../../src/router/index.js';
import { parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';
import { closeServer, eventually, listenLoopback, post, rawRequest } from '../helpers/http.js';
import { rawHttpServer } from '../helpers/raw-http-server.js';
import { startTestRouter } from '../helpers/router.js';

const model = 'relay-test-model';
const CHUNK = Buffer.alloc(1 << 20, 'x');

/** A worker in a few lines of node:http: /v1/models, and generation answered by `answer`. */
class Engine {
  readonly server: Server;
  received: Buffer[] = [];
  /** Responses whose connection closed before they were fully written. */
  closedEarly = 0;
  /** Connections that carried a generation request and closed, however they ended. */
  socketsClosed = 0;
  readonly #generationSockets = new WeakSet<Socket>();

  constructor(private readonly answer: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void) {
    this.server = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model' }] }));
        return;
      }
      if (req.method !== 'POST') return void res.writeHead(404).end();
      if (!this.#generationSockets.has(req.socket)) {
        this.#generationSockets.add(req.socket);
        req.socket.once('close', () => this.socketsClosed++);
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        this.received.push(body);
        res.on('close', () => {
          if (!res.writableFinished) this.closedEarly++;
        });
        this.answer(req, res, body);
      });
    });
  }

  listen(): Promise<string> {
    return listenLoopback(this.server);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }
}

let engines: Engine[] = [];
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await Promise.all(engines.map((e) => e.close()));
  router = undefined;
  engines = [];
});

async function start(...answers: Array<(req: IncomingMessage, res: ServerResponse, body: Buffer) => void>): Promise<Router> {
  engines = answers.map((a) => new Engine(a));
  const urls = await Promise.all(engines.map((e) => e.listen()));
  router = await startTestRouter(urls, { policy: 'round_robin', modelId: model });
  return router;
}

const chatBody = JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });

/** Write `total` bytes in 1 MiB chunks, honouring backpressure; counts what was handed to the socket. */
function writeLarge(res: ServerResponse, total: number, progress: { written: number }): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
  const more = (): void => {
    while (progress.written < total) {
      const n = Math.min(CHUNK.length, total - progress.written);
      progress.written += n;
      if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) return void res.once('drain', more);
    }
    res.end();
  };
  more();
}

describe('the relay', () => {
  it('reads the worker no faster than the client drains, and delivers every byte', async () => {
    const total = 96 << 20;
    const progress = { written: 0 };
    const r = await start((_req, res) => writeLarge(res, total, progress));
    const req = httpRequest(`${r.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    const res = await new Promise<IncomingMessage>((resolve) => {
      req.once('response', resolve);
      req.end(chatBody);
    });
    expect(res.statusCode).toBe(200);
    res.pause();
    // The client reads nothing for a while: the worker's writes must stall well short
    // of the whole body (socket buffers on both hops hold a few MiB, not 96).
    await new Promise((d) => setTimeout(d, 1000));
    const stalledAt = progress.written;
    expect(stalledAt).toBeLessThan(32 << 20);
    let received = 0;
    res.on('data', (c: Buffer) => (received += c.length));
    res.resume();
    await new Promise((d) => res.once('end', d));
    expect(received).toBe(total);
    expect(progress.written).toBe(total);
  });

  it('skips an informational 1xx and relays the final answer', async () => {
    const r = await start((_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [] }));
    });
    const res = await post(`${r.url}/v1/chat/completions`, chatBody);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).object).toBe('chat.completion');
  });

  it('drops a long failure body with its connection and retries on another worker', async () => {
    const failing = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      // 64 MiB of error page: more than is worth reading to keep the connection.
      for (let i = 0; i < 64; i++) res.write(CHUNK);
      res.end();
    };
    const ok = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'y', object: 'chat.completion', choices: [] }));
    };
    const r = await start(failing, ok);
    const res = await post(`${r.url}/v1/chat/completions`, chatBody);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).id).toBe('y');
    await eventually(async () => engines[0]!.socketsClosed === 1);
    const m = parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text);
    expect(sumSamples(m.get('sgl_router_retries_total'), (l) => l.reason === 'status_500')).toBe(1);
  });

  it('a client leaving mid-body frees the worker connection at once', async () => {
    const progress = { written: 0 };
    const r = await start((_req, res) => writeLarge(res, 512 << 20, progress));
    const req = httpRequest(`${r.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    const res = await new Promise<IncomingMessage>((resolve) => {
      req.once('response', resolve);
      req.end(chatBody);
    });
    await new Promise((d) => res.once('data', d));
    req.destroy();
    await eventually(async () => engines[0]!.closedEarly === 1);
    expect(progress.written).toBeLessThan(512 << 20);
    const m = parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text);
    expect(sumSamples(m.get('sgl_router_worker_requests_total'), (l) => l.outcome === 'cancelled')).toBe(1);
  });

  it('a body that arrived in many chunks reaches the worker byte for byte', async () => {
    const r = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const long = JSON.stringify({ model, messages: [{ role: 'user', content: 'abc '.repeat(200_000) }], max_tokens: 4 });
    const req = httpRequest(`${r.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(long)) },
    });
    const done = new Promise<IncomingMessage>((resolve) => req.once('response', resolve));
    // Written in 64 KiB pieces with pauses, so the router reads it in many chunks.
    const bytes = Buffer.from(long);
    for (let o = 0; o < bytes.length; o += 65_536) {
      req.write(bytes.subarray(o, o + 65_536));
      await new Promise((d) => setImmediate(d));
    }
    req.end();
    const res = await done;
    res.resume();
    expect(res.statusCode).toBe(200);
    const digest = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
    expect(digest(engines[0]!.received[0]!)).toBe(digest(bytes));
  });

  it('a kept connection the worker closed while idle is no retry and no worker error: the request goes again on a new one', async () => {
    // Written from the wire: each connection answers its first POST, and meets a second one
    // with a close, as a server does whose idle timeout fired as the request arrived
    // (uvicorn's is 5 s and it states none).
    const completion = JSON.stringify({
      id: 'kept',
      object: 'chat.completion',
      created: 0,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    });
    const answer = (body: string): string =>
      `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const postsOn = new Map<number, number>();
    const worker = await rawHttpServer(({ conn, head, socket }) => {
      if (head.startsWith('GET /v1/models '))
        return void socket.write(answer(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model' }] })));
      if (head.startsWith('GET ')) return void socket.write('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
      const before = postsOn.get(conn) ?? 0;
      postsOn.set(conn, before + 1);
      if (before > 0) return void socket.destroy();
      socket.write(answer(completion));
    });
    try {
      router = await startTestRouter([worker.url], { policy: 'round_robin', modelId: model });
      const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'none', maxRetries: 0 });
      for (let i = 0; i < 3; i++) {
        const c = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `hi ${i}` }], max_tokens: 4 });
        expect(c.choices[0]!.message.content).toBe('ok');
      }
      // Every request after the first met a close on its kept connection and went again on a new one.
      expect(worker.requests.filter((r) => r.head.startsWith('POST ')).length).toBe(5);
      const m = parsePrometheusText((await rawRequest(`${router.url}/metrics`)).text);
      expect(sumSamples(m.get('sgl_router_retries_total'), () => true) ?? 0).toBe(0);
      expect(sumSamples(m.get('sgl_router_worker_requests_total'), (l) => l.outcome === 'success')).toBe(3);
      expect(sumSamples(m.get('sgl_router_worker_requests_total'), (l) => l.outcome !== 'success') ?? 0).toBe(0);
    } finally {
      await router?.close();
      router = undefined;
      await worker.close();
    }
  });

  it("a stream the worker cuts mid-event: the open event is ended before the router's error event, which a client can read", async () => {
    const r = await start((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"n":1}\n\ndata: {"parti');
      setTimeout(() => req.socket.destroy(), 50);
    });
    const res = await rawRequest(`${r.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, stream: true }),
      headers: { 'content-type': 'application/json' },
    });
    const events = res.text.split('\n\n').filter((e) => e !== '');
    expect(events.slice(0, 2)).toEqual(['data: {"n":1}', 'data: {"parti']);
    expect(JSON.parse(events[2]!.slice('data: '.length)).error.code).toBe('upstream_body_incomplete');
  });

  it("a worker's repeated Content-Length reaches the client as one", async () => {
    const worker = await rawHttpServer(({ head, socket }) => {
      if (head.startsWith('GET /v1/models ')) {
        const models = JSON.stringify({ object: 'list', data: [{ id: model, object: 'model' }] });
        return void socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${models.length}\r\n\r\n${models}`);
      }
      if (head.startsWith('GET ')) return void socket.write('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\ncontent-length: 2\r\n\r\n{}');
    });
    try {
      router = await startTestRouter([worker.url], { policy: 'round_robin', modelId: model });
      const res = await post(`${router.url}/v1/chat/completions`, chatBody);
      expect([res.status, res.text]).toEqual([200, '{}']);
    } finally {
      await router?.close();
      router = undefined;
      await worker.close();
    }
  });
});
