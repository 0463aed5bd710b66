import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestCapture } from '../state/capture/index.js';
import { ApiErrors } from '../api-error/api-error.js';

/**
 * GET /admin/capture?block_tokens=N (docs/bench.md §Capture): newline-delimited JSON,
 * one line per request that completed while the client listens, until it leaves. The
 * first line says the block size: `{"block_tokens": N, "key_tokens": B}`; each request
 * line is `{"at_ms", "input_tokens", "output_tokens", "keys"}`, where `keys` are the
 * prefix hashes at every N tokens (one per full block of N). A client that reads too
 * slowly loses requests, never the router's memory: they are counted, and a
 * `{"dropped": n}` line follows once it caught up.
 */
export function streamCapture(req: IncomingMessage, res: ServerResponse, capture: RequestCapture, keyTokens: number): void {
  const asked = new URL(req.url ?? '/', 'http://router').searchParams.get('block_tokens');
  const blockTokens = asked === null ? 512 : Number(asked);
  if (!Number.isSafeInteger(blockTokens) || blockTokens < keyTokens || blockTokens % keyTokens !== 0) {
    throw ApiErrors.badRequest(
      `block_tokens must be a whole multiple of the router's --block-size (${keyTokens}), e.g. ${keyTokens * 32}; got '${asked}'`,
    );
  }
  const step = blockTokens / keyTokens;
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache' });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  res.write(`${JSON.stringify({ block_tokens: blockTokens, key_tokens: keyTokens })}\n`);
  let dropped = 0;
  const stop = capture.listen((r) => {
    if (res.writableNeedDrain) {
      dropped++;
      return;
    }
    const keys: number[] = [];
    for (let i = step - 1; i < r.keys.length; i += step) keys.push(r.keys[i]!);
    res.write(`${JSON.stringify({ at_ms: Math.round(r.atMs), input_tokens: r.inputTokens, output_tokens: r.outputTokens, keys })}\n`);
  });
  res.on('drain', () => {
    if (dropped === 0) return;
    res.write(`${JSON.stringify({ dropped })}\n`);
    dropped = 0;
  });
  res.once('close', stop);
}
