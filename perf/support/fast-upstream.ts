/**
 * Upstreams that cost (almost) nothing: servers that read a generation request and
 * answer one fixed 200-byte completion, plus the few GET routes a router asks an
 * engine (`/v1/models` naming SGLang, `/v1/loads` with an idle rank, `/health`), so a
 * router's introspection, load sampling, health checks and gate run as they would
 * against SGLang. Measuring a router in
 * front of these measures the router, not the engines.
 *
 * They speak HTTP/1.1 over node:net with a parser that reads only the request line
 * and the body's framing and skips the body unread. With node:http, the upstream and
 * the client filled the core they share at 16 KB bodies (97 % busy, the kernel's work
 * counted), and that row measured the shared core, not the proxies. Bodies framed by
 * Content-Length (routers and the bare proxies send bodies they have read whole, and
 * wrk sends a fixed body) or chunked without trailers (Envoy, when an ext_proc
 * processor streams the body: perf/epp.ts).
 *
 *   node dist/perf/support/fast-upstream.js 3
 * prints the servers' URLs, space-separated, on one line of stdout.
 */
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

function response(status: string, body: Buffer): Buffer {
  const head = `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nkeep-alive: timeout=65\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

const COMPLETION = (() => {
  const base = {
    id: 'cmpl-bench',
    object: 'chat.completion',
    model: 'fast',
    choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }],
  };
  const pad = 200 - Buffer.byteLength(JSON.stringify(base));
  base.choices[0]!.message.content = 'x'.repeat(Math.max(0, pad));
  return response('200 OK', Buffer.from(JSON.stringify(base)));
})();
// owned_by names the engine for the routers that ask (the Shepherd Model Gateway refuses a worker it cannot name).
const MODELS = response(
  '200 OK',
  Buffer.from(JSON.stringify({ object: 'list', data: [{ id: 'fast', object: 'model', owned_by: 'sglang' }] })),
);
const HEALTHY = response('200 OK', Buffer.alloc(0));
const LOADS = response(
  '200 OK',
  Buffer.from(JSON.stringify({ loads: [{ dp_rank: 0, num_running_reqs: 0, num_waiting_reqs: 0, num_used_tokens: 0 }] })),
);
const NOT_FOUND = response('404 Not Found', Buffer.from('{"error":"not found"}'));
const UNSUPPORTED = Buffer.from('HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\nconnection: close\r\n\r\n', 'latin1');
const MAX_HEAD = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** The generation routes: any other POST is one SGLang does not serve (the vLLM router's /v1/chat/completions/render). */
const GENERATION = new Set(['/v1/chat/completions', '/v1/completions', '/generate']);

/** The answer to a request, from its head (request line and headers). */
function answerFor(head: string): Buffer {
  const space = head.indexOf(' ');
  const path = head.slice(space + 1, head.indexOf(' ', space + 1)).split('?', 1)[0]!;
  if (!head.startsWith('GET ')) return GENERATION.has(path) ? COMPLETION : NOT_FOUND;
  if (path === '/v1/models') return MODELS;
  if (path === '/v1/loads') return LOADS;
  if (path === '/health') return HEALTHY;
  return NOT_FOUND;
}

/** One keep-alive connection: heads are parsed, bodies skipped by their framing. */
function serve(socket: Socket): void {
  socket.setNoDelay(true);
  let pending: Buffer | null = null;
  let skip = 0;
  /** In a chunked body: bytes of the current chunk's data (and its CRLF) still to skip are in `skip`; the size line is read into `line`. */
  let chunked = false;
  let line = '';
  let answer = COMPLETION;
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    let data = chunk;
    let at = 0;
    while (at < data.length) {
      if (skip > 0) {
        const n = Math.min(skip, data.length - at);
        skip -= n;
        at += n;
        if (skip === 0 && !chunked) socket.write(answer);
        continue;
      }
      if (chunked) {
        // A size line (hex, extensions ignored), its data and CRLF; size 0 and the final CRLF end the body.
        const nl = data.indexOf(0x0a, at);
        if (nl < 0) {
          line += data.toString('latin1', at);
          if (line.length > 1024) return void socket.end(UNSUPPORTED);
          return;
        }
        line += data.toString('latin1', at, nl);
        at = nl + 1;
        const size = parseInt(line, 16);
        line = '';
        if (Number.isNaN(size)) return void socket.end(UNSUPPORTED);
        if (size === 0) {
          // The last chunk: the answer goes once its empty trailer line is read.
          chunked = false;
          skip = 2;
          continue;
        }
        skip = size + 2;
        continue;
      }
      if (pending) {
        data = Buffer.concat([pending, data.subarray(at)]);
        at = 0;
        pending = null;
      }
      const end = data.indexOf(HEAD_END, at);
      if (end < 0) {
        if (data.length - at > MAX_HEAD) return void socket.end(UNSUPPORTED);
        pending = Buffer.from(data.subarray(at));
        return;
      }
      const head = data.toString('latin1', at, end);
      at = end + HEAD_END.length;
      answer = answerFor(head);
      if (/\r\ntransfer-encoding:\s*chunked\s*(\r\n|$)/i.test(head)) {
        chunked = true;
        continue;
      }
      if (/\r\ntransfer-encoding:/i.test(head)) return void socket.end(UNSUPPORTED);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      skip = length ? Number(length[1]) : 0;
      if (skip === 0) socket.write(answer);
    }
  });
}

const n = Math.max(1, Number(process.argv[2] ?? 3));
const servers = Array.from({ length: n }, () => createServer(serve));
await Promise.all(servers.map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))));
process.stdout.write(`${servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`).join(' ')}\n`);
process.on('SIGTERM', () => process.exit(0));
