import { StringDecoder } from 'node:string_decoder';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import { DECISIONS } from '../contract/index.js';
import { SseParser } from '../fleet/index.js';
import { lengthRefusalReason } from '../sim/index.js';
import type { LengthRefusalReason } from '../sim/index.js';
import { countRefusal, emptyTraceResult } from '../virtual/index.js';
import type { TraceRunResult } from '../virtual/index.js';
import { traceFollowers, tracePromptTokens } from '../workload/index.js';
import type { TraceRequest } from '../workload/index.js';
import { counterDelta, scrapeRouterCounters } from './router-counters.js';

export interface WallTraceOptions {
  /** The router to replay through. */
  url: string;
  trace: readonly TraceRequest[];
  traceBlockSize: number;
  /**
   * Simulated time per real time of the engines (`routerctl sim --speedup`): the trace
   * is in engine time, so it is sent this much slower in real time, and every measured
   * time is scaled back, which makes the report comparable with the virtual clock's.
   */
  speedup: number;
  timeoutMs: number;
  /** The model the engines serve, named in each request: the Shepherd Model Gateway refuses a /generate that names none. */
  model?: string;
  signal?: AbortSignal;
}

/**
 * The trace replayed over HTTP (docs/bench.md §Virtual clock, "the honest check"):
 * each request leaves at its trace time as a streamed SGLang `/generate` with the
 * prompt's `input_ids` and `ignore_eos`, so the router keys it exactly as the virtual
 * run does (`--block-size` tokens) and the engine generates `output_length` tokens.
 * The decision mix and diverted blocks are the router's own counters over the run; the
 * cached tokens are what the engines reported per request.
 */
export async function runTraceWall(o: WallTraceOptions): Promise<TraceRunResult> {
  const base = o.url.replace(/\/+$/, '');
  const before = await scrapeRouterCounters(base);
  const agent = new Agent({ connections: 4096, keepAliveTimeout: 10_000, pipelining: 1 });
  const result = emptyTraceResult(o.trace.length);
  const scale = o.speedup;
  const t0 = performance.now();
  let lastFinish = 0;
  // Later turns of a conversation leave once the turn they follow finished.
  const next = traceFollowers(o.trace);
  const one = async (i: number, from: number): Promise<void> => {
    const r = o.trace[i]!;
    const wait = from + r.atMs / scale - performance.now();
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    if (o.signal?.aborted) return;
    const sent = performance.now();
    const body = JSON.stringify({
      ...(o.model !== undefined ? { model: o.model } : {}),
      input_ids: tracePromptTokens(r, o.traceBlockSize),
      sampling_params: { max_new_tokens: r.outputLength, ignore_eos: true },
      stream: true,
    });
    const outcome = await streamGenerate(base, body, agent, o.timeoutMs);
    if (outcome.kind === 'shed') result.shed++;
    else if (outcome.kind === 'refused') {
      // A 400 whose words are not a length refusal is counted in the total only.
      if (outcome.reason === undefined) result.refused++;
      else countRefusal(result, outcome.reason);
    } else if (outcome.kind === 'failed') result.failures++;
    else {
      result.finished++;
      result.outputTokens += outcome.tokens;
      result.promptTokens += outcome.promptTokens;
      result.cachedTokens += outcome.cachedTokens;
      if (outcome.firstAt !== undefined) result.ttftMs.push((outcome.firstAt - sent) * scale);
      if (outcome.tokens > 1) result.itlMs.push((outcome.gaps / (outcome.tokens - 1)) * scale);
      lastFinish = Math.max(lastFinish, performance.now() - t0);
    }
    const done = performance.now();
    await Promise.all((next.get(i) ?? []).map((j) => one(j, done)));
  };
  try {
    await Promise.all(o.trace.flatMap((r, i) => (r.after === undefined ? [one(i, t0)] : [])));
  } finally {
    await agent.close();
  }
  const after = await scrapeRouterCounters(base);
  if (after) {
    const d = counterDelta(before, after);
    for (const k of DECISIONS) result.decisions[k] = d.decisions[k];
    result.divertedBlocks = d.diverted_blocks;
  }
  result.spanS = (lastFinish * scale) / 1000;
  return result;
}

type Outcome =
  | { kind: 'ok'; firstAt: number | undefined; tokens: number; gaps: number; promptTokens: number; cachedTokens: number }
  | { kind: 'refused'; reason: LengthRefusalReason | 'queue_full' | undefined }
  /** The router's own 429 (`request_shed`): --admission slo, or a sheddable request while every worker is queued. */
  | { kind: 'shed' }
  | { kind: 'failed' };

/**
 * One streamed /generate: every `data:` event with `"finish_reason":null` is one more
 * token (SGLang's cumulative streaming); the last event carries the request's meta_info.
 */
async function streamGenerate(base: string, body: string, dispatcher: Dispatcher, timeoutMs: number): Promise<Outcome> {
  let res: Dispatcher.ResponseData;
  try {
    res = await request(`${base}/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch {
    return { kind: 'failed' };
  }
  if (res.statusCode === 400) return { kind: 'refused', reason: await refusalReason(res) };
  if (res.statusCode !== 200) {
    await res.body.dump().catch(() => undefined);
    if (res.statusCode === 429 && res.headers['x-router-error-code'] === 'request_shed') return { kind: 'shed' };
    // Another 429: every engine's waiting queue was full (the router relays it when no other worker can take the request).
    return res.statusCode === 429 ? { kind: 'refused', reason: 'queue_full' } : { kind: 'failed' };
  }
  let firstAt: number | undefined;
  let prev = 0;
  let gaps = 0;
  let events = 0;
  let last = '';
  const sse = new SseParser();
  const text = new StringDecoder('utf8');
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const now = performance.now();
      for (const { data } of sse.push(text.write(chunk))) {
        if (data === '[DONE]') continue;
        // A token's event says its request has not finished; the last event carries the meta_info.
        if (data.includes('"finish_reason":null')) {
          if (firstAt === undefined) firstAt = now;
          else gaps += now - prev;
          prev = now;
          events++;
        } else last = data;
      }
    }
  } catch {
    return { kind: 'failed' };
  }
  let meta: { completion_tokens?: unknown; prompt_tokens?: unknown; cached_tokens?: unknown } = {};
  try {
    meta = (JSON.parse(last) as { meta_info?: typeof meta }).meta_info ?? {};
  } catch {
    return { kind: 'failed' };
  }
  const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const tokens = num(meta.completion_tokens) || events;
  return { kind: 'ok', firstAt, tokens, gaps, promptTokens: num(meta.prompt_tokens), cachedTokens: num(meta.cached_tokens) };
}

/**
 * Why an engine refused a request for length, read from the 400 body it sent (relayed
 * by the router as sent): SGLang's `{"error":{"message"}}` or the OpenAI shape's
 * `message`, in the engine's own words (docs/simulator.md §Refusals for length).
 */
async function refusalReason(res: Dispatcher.ResponseData): Promise<LengthRefusalReason | undefined> {
  let body: { error?: { message?: unknown }; message?: unknown };
  try {
    body = (await res.body.json()) as typeof body;
  } catch {
    return undefined;
  }
  const message = body?.error?.message ?? body?.message;
  return typeof message === 'string' ? lengthRefusalReason(message) : undefined;
}
