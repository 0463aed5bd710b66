import type { KeyedPrompt } from './keyed-prompt.js';
import { NO_KV_NODE } from './kv-block-cache.js';
import type { KvHolder } from './kv-block-cache.js';

/** What the HTTP layer hears about a request while the engine runs it. */
export interface RequestObserver {
  /** One generated token; `index` counts from 0. The first call is the first token. */
  onToken(piece: string, index: number, atMs: number): void;
  /** Called once when the request leaves the engine, finished or aborted. */
  onFinish(request: SimRequest): void;
}

export interface SubmitInput {
  promptTokens: number[];
  maxTokens: number;
  ignoreEos: boolean;
}

/** A request whose prompt comes keyed already (KeyedPrompt), with no token array: a replayed trace's. */
export interface KeyedSubmitInput {
  prompt: KeyedPrompt;
  maxTokens: number;
  ignoreEos: boolean;
}

export type FinishReason = 'length' | 'stop' | 'abort';
export type RequestState = 'waiting' | 'running' | 'finished' | 'aborted';

/** One request inside an engine rank. Times are simulated milliseconds. */
export class SimRequest implements KvHolder {
  readonly id: number;
  /** The prompt as the cache keys it. */
  readonly prompt: KeyedPrompt;
  /** Keys of the prompt's whole blocks (prompt.blockKeys). */
  readonly promptHashes: readonly number[];
  readonly maxTokens: number;
  readonly outputLen: number;
  readonly arrivalAt: number;
  /** When the arrival overhead (tokenisation etc.) is over and it may be admitted. */
  readonly readyAt: number;
  readonly observer: RequestObserver;

  /** The DP rank that owns it. */
  rank = 0;
  state: RequestState = 'waiting';
  admittedAt = NaN;
  firstTokenAt = NaN;
  finishedAt = NaN;
  cachedTokens = 0;
  prefillRemaining = 0;
  /** Prefill tokens scheduled in the current step (0 when decoding or idle). */
  stepChunk = 0;
  decodingThisStep = false;
  /**
   * Prefix-cache match found for it by the last lpm scheduling pass, in tokens. Like
   * SGLang's, it is refreshed only when the policy sorts the queue, and stays 0 for a
   * request no pass has looked at yet.
   */
  matchedTokens = 0;
  lastTokenAt = NaN;
  /** The gaps between its tokens so far, summed in order, ms: what a mean inter-token latency divides. */
  tokenGapsMs = 0;
  readonly output: number[] = [];
  finishReason: FinishReason | undefined;

  /** Cache bookkeeping: the leading blocks of its chain it pins, the deepest run of them (KvHolder), and its reservation. */
  pinnedCount = 0;
  kvNode = NO_KV_NODE;
  anonymousBlocks = 0;
  promptBlocksCommitted = 0;

  constructor(
    id: number,
    prompt: KeyedPrompt,
    maxTokens: number,
    outputLen: number,
    arrivalAt: number,
    readyAt: number,
    observer: RequestObserver,
  ) {
    this.id = id;
    this.prompt = prompt;
    this.promptHashes = prompt.blockKeys;
    this.maxTokens = maxTokens;
    this.outputLen = outputLen;
    this.arrivalAt = arrivalAt;
    this.readyAt = readyAt;
    this.observer = observer;
  }

  get promptTokens(): number {
    return this.prompt.length;
  }

  get completionTokens(): number {
    return this.output.length;
  }

  get ttftMs(): number {
    return this.firstTokenAt - this.arrivalAt;
  }
}
