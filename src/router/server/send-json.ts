import type { ServerResponse } from 'node:http';

/** A JSON answer with its length, so keep-alive needs no chunked encoding. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
