import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeMode =
  | { kind: 'stream'; reply?: string; tokenDelayMs?: number; cachedTokens?: number }
  | { kind: 'status'; status: number; code?: string }
  | { kind: 'stall' };

export interface FakeServer {
  url: string;
  /** Parsed JSON bodies of every POST /v1/chat/completions, in arrival order. */
  bodies: Array<{ messages: Array<{ role: string; content: string }>; max_tokens: number; model?: string }>;
  close(): Promise<void>;
}

/**
 * A stand-in OpenAI-compatible endpoint for client-side tests: streams a fixed reply
 * word by word with a usage chunk, answers every request with one error status, or
 * accepts requests and never answers (a stalled router).
 */
export async function startFakeOpenAi(mode: FakeMode): Promise<FakeServer> {
  const bodies: FakeServer['bodies'] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model' }] }));
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeServer['bodies'][number]);
      if (mode.kind === 'stall') {
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      if (mode.kind === 'status') {
        res
          .writeHead(mode.status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { type: 'server_error', code: mode.code ?? 'unavailable', message: 'service unavailable' } }));
        return;
      }
      void stream(res, mode.reply ?? 'one two three four', mode.tokenDelayMs ?? 1, mode.cachedTokens ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        for (const r of open) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function stream(res: ServerResponse, reply: string, delayMs: number, cached: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (o: unknown): void => void res.write(`data: ${typeof o === 'string' ? o : JSON.stringify(o)}\n\n`);
  const words = reply.split(' ');
  for (const [i, w] of words.entries()) {
    if (res.destroyed) return;
    send({ choices: [{ index: 0, delta: { content: i === 0 ? w : ` ${w}` }, finish_reason: null }] });
    await new Promise((r) => setTimeout(r, delayMs));
  }
  send({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }] });
  send({ choices: [], usage: { prompt_tokens: 100, completion_tokens: words.length, prompt_tokens_details: { cached_tokens: cached } } });
  send('[DONE]');
  res.end();
}
