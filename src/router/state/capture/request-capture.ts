import type { PolicyWorker } from '../../policies/index.js';
import { UsageCountScanner } from '../decisions/index.js';
import type { RequestTrace } from '../decisions/index.js';

/**
 * What the router saw of one request, for `routerctl bench --capture` (docs/bench.md
 * §Capture): when it arrived, its sizes, and the prefix keys of its blocks; never
 * text, never token ids. Keys are the router's own chained block hashes, so equal
 * keys at the same position mean an equal prefix.
 */
export interface CapturedRequest {
  /** Arrival, ms since the epoch. */
  atMs: number;
  /** Exact for input_ids, estimated from characters for text (as the router's admission reads it). */
  inputTokens: number;
  /** The engine's completion_tokens; else the response's stream events, one token each. */
  outputTokens: number;
  /** The request's prefix block hashes, one per `--block-size` tokens (full blocks only). */
  keys: readonly number[];
}

const COMPLETION_TOKENS = Buffer.from('"completion_tokens"');
const SSE_DATA = Buffer.from('data:');

/**
 * Hands every completed request to whoever listens (GET /admin/capture). Free when
 * nobody does: the request path asks `active` once and adds nothing else.
 */
export class RequestCapture {
  readonly #listeners = new Set<(r: CapturedRequest) => void>();

  get active(): boolean {
    return this.#listeners.size > 0;
  }

  /** Listen until the returned function is called. */
  listen(fn: (r: CapturedRequest) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * The request's trace with the capture added: it watches the relayed bytes for the
   * output's size and hands the request over once it completed with 200. `inner`
   * (the decision record's trace) keeps its headers and callbacks.
   */
  trace(inner: RequestTrace | undefined, arrivedAt: number, inputTokens: number, keys: readonly number[]): RequestTrace {
    const completion = new UsageCountScanner(COMPLETION_TOKENS);
    let events = 0;
    return {
      headers: inner?.headers ?? {},
      onChunk: (chunk) => {
        inner?.onChunk?.(chunk);
        completion.push(chunk);
        for (let at = chunk.indexOf(SSE_DATA); at >= 0; at = chunk.indexOf(SSE_DATA, at + SSE_DATA.length)) events++;
      },
      retried: (to: PolicyWorker) => inner?.retried(to),
      done: (status, firstByteAt) => {
        inner?.done(status, firstByteAt);
        if (status !== 200 || this.#listeners.size === 0) return;
        // A stream without usage: its events less the closing [DONE] and the finish chunk.
        const outputTokens = completion.value >= 0 ? completion.value : Math.max(1, events - 2);
        const r: CapturedRequest = { atMs: arrivedAt, inputTokens, outputTokens, keys };
        for (const fn of this.#listeners) fn(r);
      },
    };
  }
}
