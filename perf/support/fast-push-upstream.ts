/**
 * Idle SGLang engines that publish their load by push, as cheaply as one process can
 * stand in for thousands of them: per worker, a loopback HTTP port answering what a
 * router asks at start-up (`/v1/models`, `/server_info`, `/v1/loads`) and two ZMQ PUB
 * sockets, KV events (bound, quiet: an idle engine stores nothing) and `LoadStat`
 * (an idle rank's heartbeat once a second). Measuring a router in front of these
 * measures the router's push consumer, not the engines.
 *
 * What the router reads is what SGLang writes (docs/engine-load.md §Load by push):
 * `/server_info` carries the `kv_events` descriptor with exactly the keys SGLang's
 * describe_kv_events_publisher writes, and the raw `kv_events_config` and
 * `load_publish_endpoint` server arguments; the load frames are
 * `[b"load", seq (8 bytes, big-endian, from 0), msgpack LoadStat]`. Every port is the
 * kernel's pick: on a machine where other fleets listen by the thousand, no range of
 * ports can be counted on, so each engine is as if started with explicit
 * `--kv-events-config` and `--load-publish-endpoint tcp://*:PORT` (no replay socket).
 *
 * The heartbeats are spread evenly over each second, as independent engines' are.
 * The process needs about 10 descriptors per worker (start it with a raised
 * `ulimit -n`), and more ZMQ sockets than libzmq's default cap of 1,023, which its
 * own context raises.
 *
 *   node dist/perf/support/fast-push-upstream.js 4096 [--poll]
 * (`--poll`: the same engines without push, whose load a router polls) prints the servers' URLs, space-separated, on one line of stdout.
 */
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { Context, Publisher } from 'zeromq';
import { encodeMsgpack } from '../../src/msgpack/index.js';

const MODEL = 'fast';
const BLOCK_SIZE = 16;
const MAX_TOTAL_NUM_TOKENS = 262_144;
const KV_TOPIC = 'kv';
const LOAD_TOPIC = Buffer.from('load');
const HEARTBEAT_MS = 1000;
const TICK_MS = 10;

function response(status: string, body: string): Buffer {
  const bytes = Buffer.from(body);
  const head = `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${bytes.length}\r\nkeep-alive: timeout=65\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
}

const MODELS = response(
  '200 OK',
  JSON.stringify({
    object: 'list',
    data: [{ id: MODEL, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'sglang', root: MODEL, max_model_len: 32_768 }],
  }),
);
const LOADS = response(
  '200 OK',
  JSON.stringify({
    timestamp: new Date().toISOString(),
    version: '0.5.19',
    loads: [
      {
        dp_rank: 0,
        num_running_reqs: 0,
        num_waiting_reqs: 0,
        num_waiting_uncached_tokens: 0,
        num_used_tokens: 0,
        max_total_num_tokens: MAX_TOTAL_NUM_TOKENS,
      },
    ],
  }),
);
const HEALTH = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 0\r\nkeep-alive: timeout=65\r\n\r\n', 'latin1');
const NOT_FOUND = response('404 Not Found', '{"detail":"Not Found"}');
const UNSUPPORTED = Buffer.from('HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\nconnection: close\r\n\r\n', 'latin1');
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/**
 * SGLang's GET /server_info for a worker publishing KV events on `ports.kv` and its
 * load on `ports.load` (null: neither): `dataclasses.asdict(server_args)`, the ones a
 * router reads, plus the scheduler's capacity and the `kv_events` descriptor.
 */
function serverInfo(ports: { kv: number; load: number } | null): Buffer {
  return response(
    '200 OK',
    JSON.stringify({
      model_path: MODEL,
      served_model_name: MODEL,
      dp_size: 1,
      tp_size: 1,
      page_size: BLOCK_SIZE,
      max_running_requests: 256,
      max_total_tokens: null,
      max_total_num_tokens: MAX_TOTAL_NUM_TOKENS,
      schedule_policy: 'fcfs',
      // Without --kv-events-config and --load-publish-endpoint, SGLang writes nulls and no descriptor.
      kv_events_config: ports === null ? null : JSON.stringify({ publisher: 'zmq', endpoint: `tcp://*:${ports.kv}`, topic: KV_TOPIC }),
      load_publish_endpoint: ports === null ? null : `tcp://*:${ports.load}`,
      kv_events:
        ports === null
          ? null
          : {
              publisher: 'zmq',
              endpoint_host: '*',
              endpoint_port_base: ports.kv,
              topic: KV_TOPIC,
              block_size: BLOCK_SIZE,
              dp_size: 1,
              load_endpoint_port_base: ports.load,
              load_topic: 'load',
            },
      version: '0.5.19',
    }),
  );
}

/** GET requests only, on keep-alive connections; anything with a body is refused and closed. */
function serve(socket: Socket, info: Buffer): void {
  socket.setNoDelay(true);
  let pending = '';
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    let data = pending + chunk.toString('latin1');
    pending = '';
    for (;;) {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        if (data.length > 64 * 1024) return void socket.end(UNSUPPORTED);
        pending = data;
        return;
      }
      const head = data.slice(0, end);
      data = data.slice(end + HEAD_END.length);
      if (!head.startsWith('GET ')) return void socket.end(UNSUPPORTED);
      const path = head.slice(4, head.indexOf(' ', 4)).split('?', 1)[0];
      socket.write(
        path === '/v1/models'
          ? MODELS
          : path === '/server_info' || path === '/get_server_info'
            ? info
            : path === '/v1/loads'
              ? LOADS
              : path === '/health'
                ? HEALTH
                : NOT_FOUND,
      );
    }
  });
}

interface PushWorker {
  readonly http: Server;
  /** Absent with --poll: the engine publishes nothing and is polled. */
  readonly kv: Publisher | undefined;
  readonly load: Publisher | undefined;
  seq: number;
  sending: boolean;
}

/** The port a socket was bound to on the kernel's pick (`tcp://127.0.0.1:*`). */
function boundPort(socket: Publisher): number {
  return Number(/:(\d+)$/.exec(socket.lastEndpoint ?? '')?.[1]);
}

async function startWorker(context: Context, push: boolean): Promise<PushWorker> {
  // Loopback only; the descriptor says `*` because SGLang needs a wildcard bind to publish load.
  const kv = push ? new Publisher({ context, linger: 0, sendHighWaterMark: 100_000 }) : undefined;
  const load = push ? new Publisher({ context, linger: 0, sendHighWaterMark: 8 }) : undefined;
  await kv?.bind('tcp://127.0.0.1:*');
  await load?.bind('tcp://127.0.0.1:*');
  const info = serverInfo(kv && load ? { kv: boundPort(kv), load: boundPort(load) } : null);
  const http = createServer((s) => serve(s, info));
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => resolve());
  });
  return { http, kv, load, seq: 0, sending: false };
}

const n = Math.max(1, Number(process.argv[2] ?? 3));
const push = !process.argv.includes('--poll');
const context = new Context({ blocky: false });
context.maxSockets = context.maxSocketsLimit;
const fleet: PushWorker[] = [];
for (let i = 0; i < n; i++) fleet.push(await startWorker(context, push));

// An idle rank: nothing running or waiting, nothing in use, its capacity known; no cache-aware policy, so no uncached count.
const IDLE = encodeMsgpack(['LoadStat', 0, 0, 0, MAX_TOTAL_NUM_TOKENS, 0, null]);
let cursor = 0;
let carry = 0;
setInterval(() => {
  // Each tick takes its share of the fleet, so each worker beats once a second, the fleet's beats spread across it.
  carry += (fleet.length * TICK_MS) / HEARTBEAT_MS;
  for (; carry >= 1; carry--) {
    const w = fleet[cursor]!;
    cursor = (cursor + 1) % fleet.length;
    if (w.load === undefined || w.sending) continue;
    const seq = Buffer.alloc(8);
    seq.writeBigInt64BE(BigInt(w.seq++));
    w.sending = true;
    w.load
      .send([LOAD_TOPIC, seq, IDLE])
      .catch(() => undefined)
      .finally(() => (w.sending = false));
  }
}, TICK_MS).unref();

process.stdout.write(`${fleet.map((w) => `http://127.0.0.1:${(w.http.address() as { port: number }).port}`).join(' ')}\n`);
process.on('SIGTERM', () => process.exit(0));
