/**
 * Upstreams that cost (almost) nothing: node:http servers that read a generation
 * request's body and answer one fixed 200-byte completion, plus the few GET routes a
 * router asks an engine (`/v1/models`, `/v1/loads` with an idle rank), so the router's
 * introspection, load sampling and gate run as they would against SGLang. Measuring a
 * router in front of these measures the router, not the engines.
 *
 *   node dist/bench/support/fast-upstream.js 3
 * prints the servers' URLs, space-separated, on one line of stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const COMPLETION = (() => {
  const base = { id: 'cmpl-bench', object: 'chat.completion', model: 'fast', choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }] };
  const pad = 200 - Buffer.byteLength(JSON.stringify(base));
  base.choices[0]!.message.content = 'x'.repeat(Math.max(0, pad));
  return Buffer.from(JSON.stringify(base));
})();
const MODELS = Buffer.from(JSON.stringify({ object: 'list', data: [{ id: 'fast', object: 'model' }] }));
const LOADS = Buffer.from(JSON.stringify({ loads: [{ dp_rank: 0, num_running_reqs: 0, num_waiting_reqs: 0, num_used_tokens: 0 }] }));

function answer(res: import('node:http').ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

const n = Math.max(1, Number(process.argv[2] ?? 3));
const servers = Array.from({ length: n }, () =>
  createServer((req, res) => {
    if (req.method === 'GET') {
      const path = (req.url ?? '/').split('?', 1)[0];
      if (path === '/v1/models') return answer(res, 200, MODELS);
      if (path === '/v1/loads') return answer(res, 200, LOADS);
      return answer(res, 404, Buffer.from('{"error":"not found"}'));
    }
    req.on('data', () => undefined);
    req.on('end', () => answer(res, 200, COMPLETION));
  }),
);
for (const s of servers) s.keepAliveTimeout = 65_000;
await Promise.all(servers.map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))));
process.stdout.write(`${servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`).join(' ')}\n`);
process.on('SIGTERM', () => process.exit(0));
