import { rename, writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { ErrorCodes, RouterctlError } from '../errors/index.js';
import { headers, normalizeRouterUrl, unauthorized, unreachable } from '../fleet/index.js';
import { toMooncakeJsonl, traceDigest } from '../workload/index.js';
import type { TraceRequest } from '../workload/index.js';

export interface CaptureOptions {
  url: string;
  file: string;
  durationMs: number;
  /** Tokens per hash id in the file (512, as the published traces). */
  blockTokens: number;
  token: string | undefined;
  signal?: AbortSignal;
}

export interface CaptureResult {
  requests: number;
  dropped: number;
  digest: string;
  /** The router ended the stream before --duration (it stopped or restarted); what came before is in the file. */
  cutShortMs: number | undefined;
}

interface CaptureLine {
  at_ms?: number;
  input_tokens?: number;
  output_tokens?: number;
  keys?: number[];
  dropped?: number;
}

/**
 * `routerctl bench --capture FILE --url R --duration D` (docs/bench.md §Capture): listen
 * on the router's GET /admin/capture for the duration and write what it saw as a
 * Mooncake-format trace, arrivals in order, from 0: each request's prefix keys become
 * hash ids (equal keys, equal ids), and the blocks past its last full one get ids of
 * their own. No text and no token ids ever reach the file. Stopped early (SIGINT), or
 * cut short by the router stopping, it writes what it has.
 */
export async function runCapture(o: CaptureOptions): Promise<CaptureResult> {
  const base = normalizeRouterUrl(o.url);
  const done = AbortSignal.any([AbortSignal.timeout(o.durationMs), ...(o.signal ? [o.signal] : [])]);
  const url = `${base}/admin/capture?block_tokens=${o.blockTokens}`;
  let res: Awaited<ReturnType<typeof request>>;
  const startedAt = Date.now();
  try {
    res = await request(url, { headers: headers(o.token), signal: done, headersTimeout: 5000, bodyTimeout: 0 });
  } catch (err) {
    throw unreachable(base, err);
  }
  if (res.statusCode === 401) {
    await res.body.dump();
    throw unauthorized(base, o.token !== undefined);
  }
  if (res.statusCode !== 200) {
    const text = (await res.body.text().catch(() => '')).slice(0, 200);
    const why =
      res.statusCode === 404
        ? 'it has no /admin/capture (a routerctl router has; sgl-router does not)'
        : `GET /admin/capture answered ${res.statusCode}: ${text}`;
    throw new RouterctlError(ErrorCodes.UNREACHABLE, `cannot capture from ${base}: ${why}`);
  }
  const seen: Array<{ atMs: number; input: number; output: number; keys: number[] }> = [];
  let dropped = 0;
  let pending = '';
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = JSON.parse(pending.slice(0, nl)) as CaptureLine;
        pending = pending.slice(nl + 1);
        if (typeof line.dropped === 'number') dropped += line.dropped;
        if (typeof line.at_ms === 'number' && Array.isArray(line.keys)) {
          seen.push({
            atMs: line.at_ms,
            input: Math.max(1, line.input_tokens ?? 1),
            output: Math.max(1, line.output_tokens ?? 1),
            keys: line.keys,
          });
        }
      }
    }
  } catch {
    // The duration ending (or ^C) is how a capture stops; anything else is the router going away.
  }
  const cutShortMs = done.aborted ? undefined : Date.now() - startedAt;
  const trace = toTrace(seen, startedAt, o.blockTokens);
  const tmp = `${o.file}.partial`;
  await writeFile(tmp, toMooncakeJsonl(trace));
  await rename(tmp, o.file);
  return { requests: trace.length, dropped, digest: traceDigest(trace), cutShortMs };
}

/** Requests in arrival order, timed from the capture's start, keys turned into small ids. */
function toTrace(
  seen: ReadonlyArray<{ atMs: number; input: number; output: number; keys: number[] }>,
  startedAt: number,
  blockTokens: number,
): TraceRequest[] {
  const ids = new Map<number, number>();
  let fresh = 0;
  const idOf = (key: number): number => {
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = fresh++));
    return id;
  };
  const sorted = [...seen].sort((a, b) => a.atMs - b.atMs);
  const out: TraceRequest[] = [];
  for (const r of sorted) {
    const hashIds = r.keys.map(idOf);
    // A text prompt's tokens are estimated: never fewer than its full blocks say.
    const input = Math.max(r.input, hashIds.length * blockTokens);
    while (hashIds.length < Math.ceil(input / blockTokens)) hashIds.push(fresh++);
    out.push({ atMs: Math.max(0, r.atMs - startedAt), inputLength: input, outputLength: r.output, hashIds });
  }
  return out;
}
