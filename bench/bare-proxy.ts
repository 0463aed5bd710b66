/**
 * The baseline for router overhead: the thinnest useful proxy — node:http in,
 * undici Pool per upstream, round-robin, body buffered (as the router buffers it)
 * and the response piped back. No parsing, no selection, no metrics.
 *
 *   node dist/bench/bare-proxy.js http://127.0.0.1:31000 http://127.0.0.1:31001
 * prints its URL on stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const upstreams = process.argv.slice(2).map((u) => new Pool(u, { connections: 1024, pipelining: 1 }));
let next = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const pool = upstreams[next++ % upstreams.length]!;
    try {
      const up = await pool.request({ path: req.url ?? '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
      res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'application/json') });
      await pipeline(up.body, res);
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  server.close();
  for (const p of upstreams) void p.destroy();
  process.exit(0);
});
