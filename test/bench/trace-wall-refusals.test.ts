import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runTraceWall } from '../../src/bench/trace-wall.js';
import type { TraceRequest } from '../../src/workload/index.js';

/**
 * On the wall clock a refusal is read from the engine's own 400 body (relayed by the
 * router as sent), in SGLang's and vLLM's words, and a 429 is a full waiting queue
 * (docs/simulator.md §Refusals for length). A stand-in router answers by prompt length.
 */
const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

async function standIn(): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url !== '/generate') {
        res.writeHead(404).end();
        return;
      }
      const n = (JSON.parse(body) as { input_ids: number[] }).input_ids.length;
      const send = (status: number, payload: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      };
      if (n === 10) send(400, { error: { message: "The input (10 tokens) is longer than the model's context length (8 tokens)." } });
      else if (n === 11)
        send(400, {
          object: 'error',
          message: "This model's maximum context length is 8 tokens. However, your request has 11 input tokens.",
          code: 400,
        });
      else if (n === 12)
        send(400, { error: { message: 'Input length (12 tokens) exceeds the maximum allowed length (4 tokens). Use a shorter input.' } });
      else if (n === 13) send(400, { error: { message: 'data_parallel_rank 3 is out of range' } });
      else if (n === 14) send(429, { error: { message: 'every worker is overloaded' } });
      else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ text: 'a', meta_info: { finish_reason: null } })}\n\n`);
        res.end(
          `data: ${JSON.stringify({ text: 'a', meta_info: { finish_reason: { type: 'length' }, prompt_tokens: n, completion_tokens: 1, cached_tokens: 0 } })}\n\ndata: [DONE]\n\n`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('runTraceWall counts refusals by their true reason', () => {
  it('context length, KV capacity and a full queue apart; a 400 of another kind in the total only', async () => {
    const url = await standIn();
    const trace: TraceRequest[] = [5, 10, 11, 12, 13, 14].map((n, i) => ({ atMs: i, inputLength: n, outputLength: 1, hashIds: [i] }));
    const r = await runTraceWall({ url, trace, traceBlockSize: 16, speedup: 1, timeoutMs: 5000 });
    expect(r.finished).toBe(1);
    expect(r.refused).toBe(5);
    expect(r.refusedBy).toEqual({ contextLength: 2, kvCapacity: 1, queueFull: 1 });
    expect(r.failures).toBe(0);
  });
});
