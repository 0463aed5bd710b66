import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import { ErrorCodes, RouterctlError, usageError } from '../errors/index.js';

/** One connection pool per console run, closed at the end so `--once` exits at once. */
export function createAgent(): Agent {
  return new Agent({ connect: { timeout: 3000 }, keepAliveTimeout: 10_000, connections: 4 });
}

export interface GetOptions {
  dispatcher: Dispatcher;
  token?: string | undefined;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface TextResponse {
  status: number;
  contentType: string;
  text: string;
}

/** GET a whole body as text, mapping transport failures to RCTL_E_UNREACHABLE. */
export async function getText(url: string, opts: GetOptions): Promise<TextResponse> {
  const timeout = opts.timeoutMs ?? 5000;
  try {
    const res = await request(url, {
      method: 'GET',
      dispatcher: opts.dispatcher,
      headers: headers(opts.token),
      headersTimeout: timeout,
      bodyTimeout: timeout,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const text = await res.body.text();
    return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text };
  } catch (err) {
    throw unreachable(url, err);
  }
}

export function headers(token: string | undefined): Record<string, string> {
  return token ? { authorization: `Bearer ${token}`, accept: '*/*' } : { accept: '*/*' };
}

/** The router's base URL as typed, checked: http(s), no trailing slash. */
export function normalizeRouterUrl(raw: string): string {
  const trimmed = raw.trim().replace(/\/+$/, '');
  let u: URL;
  try {
    u = new URL(trimmed);
  } catch {
    throw usageError(`--url ${raw} is not a URL; use e.g. http://127.0.0.1:30000`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usageError(`--url ${raw} must be http:// or https://`);
  return trimmed;
}

export function unreachable(url: string, err: unknown): RouterctlError {
  if (err instanceof RouterctlError) return err;
  const base = originOf(url);
  return new RouterctlError(ErrorCodes.UNREACHABLE, `cannot reach the router at ${base}: ${describeTransportError(err)}`, { cause: err });
}

export function unauthorized(base: string, tokenGiven: boolean): RouterctlError {
  return new RouterctlError(
    ErrorCodes.UNAUTHORIZED,
    tokenGiven
      ? `the router at ${base} refused the admin token (401); pass its --admin-token with --token or ROUTERCTL_ADMIN_TOKEN`
      : `the router at ${base} requires an admin token (401); pass it with --token or ROUTERCTL_ADMIN_TOKEN`,
  );
}

/** Why a read of a router failed, in one line: a coded error's message, else the transport's cause. */
export function failureMessage(err: unknown): string {
  return err instanceof RouterctlError ? err.message : describeTransportError(err);
}

/** A short cause an operator recognises, instead of undici's class names. */
export function describeTransportError(err: unknown): string {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connect timed out';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'no answer in time';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      if (e?.name === 'AbortError') return 'aborted';
      return e?.message ?? String(err);
  }
}

export function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return url;
  }
}
