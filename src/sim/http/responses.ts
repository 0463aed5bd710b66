import type { ServerResponse } from 'node:http';

export type Flavor = 'sglang' | 'vllm';

const ERROR_TYPES: Record<number, string> = {
  400: 'BadRequestError',
  404: 'NotFoundError',
  405: 'MethodNotAllowed',
  413: 'RequestEntityTooLarge',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  503: 'ServiceUnavailable',
};

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, text: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The engine's own error body: SGLang's OpenAI routes answer with the flat
 * FastChat shape, its native /generate with `{"error":{"message"}}`, vLLM with the
 * nested OpenAI shape. Routers must cope with all three, so the simulator speaks each.
 */
export function errorBody(flavor: Flavor, native: boolean, status: number, message: string): unknown {
  const type = ERROR_TYPES[status] ?? 'Error';
  // vLLM names a 503 by its HTTP phrase (a GracefulHTTPError), the rest by the exception.
  if (flavor === 'vllm') return { error: { message, type: status === 503 ? 'Service Unavailable' : type, param: null, code: status } };
  if (native) return { error: { message } };
  return { object: 'error', message, type, param: null, code: status };
}

export function sendError(
  res: ServerResponse,
  flavor: Flavor,
  native: boolean,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, errorBody(flavor, native, status, message), headers);
}

/** Open a server-sent-events response. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
}

export function writeSse(res: ServerResponse, data: unknown): void {
  res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}
