import { MsgpackError, MsgpackReader } from '../../msgpack/index.js';

/**
 * KV cache events as SGLang and vLLM publish them, decoded into one form
 * (docs/engine-push.md §KV events). Every published form is accepted: the outer batch
 * as an array `[ts, events, rank?]` or a map; each event positional
 * (`["BlockStored", …]`) or tagged (`{"type": "BlockStored", …}`); hashes as signed
 * i64, unsigned u64 or 32-byte bin. An event that cannot be read — an unknown tag, a
 * wrong type, more hashes than the cap — is skipped and counted; the rest of its
 * batch still applies.
 */

export type EngineKind = 'sglang' | 'vllm';

/** One event's block hashes: 64-bit values, two words each (high, low) in `words`. */
export interface BlockHashes {
  readonly count: number;
  /** words[2i] is hash i's high 32 bits, words[2i + 1] its low 32 bits. */
  readonly words: Uint32Array;
}

export type KvEvent =
  | {
      readonly kind: 'stored';
      readonly hashes: BlockHashes;
      /** The block before the first stored one; null at the root. Two words, like `hashes`. */
      readonly parent: Uint32Array | null;
      /** Tokens per block as the engine says; null when absent. */
      readonly blockSize: number | null;
      /** Tokens carried. */
      readonly tokenCount: number;
      /** The token ids, when the decoder was asked to keep them (keying events by tokens); else null. */
      readonly tokens: Uint32Array | null;
      /** "GPU", "CPU_PINNED", …; null when unset (the engines' default tier is GPU). */
      readonly medium: string | null;
      /** SGLang's metadata at position 7 (a salted store), or vLLM's LoRA name there. */
      readonly cacheSalt: string | null;
      readonly loraName: string | null;
      /** vLLM's extra_keys name something besides the tokens (images, a LoRA, a cache salt, prompt embeddings) for some block. */
      readonly extraKeys: boolean;
    }
  | { readonly kind: 'removed'; readonly hashes: BlockHashes; readonly medium: string | null }
  | { readonly kind: 'cleared' };

export interface KvEventBatch {
  /** The engine's timestamp (seconds). */
  readonly ts: number;
  /** The DP rank the payload names, if any (the socket's rank is the one to key by). */
  readonly rank: number | null;
  readonly events: readonly KvEvent[];
  /** Events skipped, by why. */
  readonly skipped: readonly SkippedEvent[];
}

export interface SkippedEvent {
  readonly index: number;
  readonly reason: string;
}

/** Limits that keep one hostile or broken payload from costing the router much. */
export const KV_EVENT_LIMITS = Object.freeze({
  /** Hashes in one event (the reference router's cap). */
  hashesPerEvent: 65_536,
  /** Events in one batch. */
  eventsPerBatch: 65_536,
});

export interface DecodeOptions {
  /** Keep BlockStored's token ids (a router that keys events by their tokens needs them); default: count and step over. */
  tokens?: boolean;
}

export class PushDecodeError extends Error {
  override readonly name = 'PushDecodeError';
}

/**
 * Decode one KV-event payload (the third frame). Throws PushDecodeError when the
 * batch itself is unreadable; events it cannot read are in `skipped`.
 */
export function decodeKvEventBatch(payload: Uint8Array, engine: EngineKind, opts: DecodeOptions = {}): KvEventBatch {
  const keep = opts.tokens === true;
  const r = new MsgpackReader(payload);
  try {
    let ts = 0;
    let rank: number | null = null;
    let events: KvEvent[] = [];
    let skipped: SkippedEvent[] = [];
    const readEvents = (): void => {
      const n = r.arrayLength();
      if (n > KV_EVENT_LIMITS.eventsPerBatch)
        throw new PushDecodeError(`${n} events in one batch (at most ${KV_EVENT_LIMITS.eventsPerBatch})`);
      ({ events, skipped } = readEventList(r, n, engine, keep));
    };
    if (r.peek() === 'array') {
      const n = r.arrayLength();
      if (n < 2) throw new PushDecodeError(`a batch array of ${n} elements (want [ts, events, rank?])`);
      ts = r.number();
      readEvents();
      if (n >= 3) rank = r.nil() ? null : r.number();
      for (let i = 3; i < n; i++) r.skip();
    } else if (r.peek() === 'map') {
      const n = r.mapLength();
      let sawEvents = false;
      for (let i = 0; i < n; i++) {
        const key = r.peek() === 'str' ? r.str() : (r.skip(), '');
        if (key === 'ts') ts = r.number();
        else if (key === 'events') {
          readEvents();
          sawEvents = true;
        } else if ((key === 'data_parallel_rank' || key === 'attn_dp_rank') && !r.nil()) rank = r.number();
        else r.skip();
      }
      if (!sawEvents) throw new PushDecodeError('a batch map without events');
    } else {
      throw new PushDecodeError(`a batch that is a ${r.peek()}, not an array or a map`);
    }
    if (!r.done) throw new PushDecodeError(`${payload.length - r.pos} bytes after the batch`);
    return { ts, rank, events, skipped };
  } catch (err) {
    if (err instanceof MsgpackError) throw new PushDecodeError(err.message);
    throw err;
  }
}

function readEventList(r: MsgpackReader, n: number, engine: EngineKind, keep: boolean): { events: KvEvent[]; skipped: SkippedEvent[] } {
  const events: KvEvent[] = [];
  const skipped: SkippedEvent[] = [];
  for (let i = 0; i < n; i++) {
    const start = r.pos;
    try {
      const e = r.peek() === 'map' ? readTaggedEvent(r, keep) : readPositionalEvent(r, engine, keep);
      events.push(e);
    } catch (err) {
      if (!(err instanceof EventError)) throw err;
      // Step over the whole event from its start, so the next one reads cleanly; if
      // even that fails, the batch's framing is broken.
      r.pos = start;
      r.skip();
      skipped.push({ index: i, reason: err.message });
    }
  }
  return { events, skipped };
}

/** One event is unreadable; its batch goes on. */
class EventError extends Error {}

const TAGS = new Set(['BlockStored', 'BlockRemoved', 'AllBlocksCleared']);

function readPositionalEvent(r: MsgpackReader, engine: EngineKind, keep: boolean): KvEvent {
  if (r.peek() !== 'array') throw new EventError(`an event that is a ${r.peek()}`);
  const n = r.arrayLength();
  if (n === 0 || r.peek() !== 'str') throw new EventError('an event without a tag');
  const tag = r.str(64);
  let read = 1;
  const next = (): boolean => read < n;
  const field = <T>(f: () => T): T => {
    read++;
    return f();
  };
  let event: KvEvent;
  if (tag === 'BlockStored') {
    if (n < 5) throw new EventError(`BlockStored with ${n - 1} fields (at least 4)`);
    const hashes = field(() => readHashes(r));
    const parent = field(() => readParent(r));
    const tokens = field(() => readTokens(r, keep));
    const blockSize = field(() => optionalInt(r, 'block_size'));
    if (next()) field(() => r.skip()); // lora_id
    const medium = next() ? field(() => optionalStr(r, 'medium')) : null;
    let cacheSalt: string | null = null;
    let loraName: string | null = null;
    let extraKeys = false;
    // Position 7 is SGLang's metadata map or vLLM's LoRA name: the engine decides.
    if (next()) {
      if (engine === 'sglang') cacheSalt = field(() => readSglangMetadata(r));
      else loraName = field(() => optionalStr(r, 'lora_name'));
    }
    if (engine === 'vllm' && next()) extraKeys = field(() => readExtraKeys(r));
    event = {
      kind: 'stored',
      hashes,
      parent,
      blockSize,
      tokenCount: tokens.count,
      tokens: tokens.ids,
      medium,
      cacheSalt,
      loraName,
      extraKeys,
    };
  } else if (tag === 'BlockRemoved') {
    if (n < 2) throw new EventError('BlockRemoved without hashes');
    const hashes = field(() => readHashes(r));
    const medium = next() ? field(() => optionalStr(r, 'medium')) : null;
    event = { kind: 'removed', hashes, medium };
  } else if (tag === 'AllBlocksCleared') {
    event = { kind: 'cleared' };
  } else {
    throw new EventError(`unknown event tag ${JSON.stringify(tag)}`);
  }
  // Fields appended by newer engines (extra_keys, group_idx, …) are stepped over.
  for (; read < n; read++) r.skip();
  return event;
}

function readTaggedEvent(r: MsgpackReader, keep: boolean): KvEvent {
  const n = r.mapLength();
  let tag: string | undefined;
  let hashes: BlockHashes | undefined;
  let parent: Uint32Array | null = null;
  let blockSize: number | null = null;
  let tokens: TokenIds = NO_TOKENS;
  let medium: string | null = null;
  let cacheSalt: string | null = null;
  let loraName: string | null = null;
  let extraKeys = false;
  for (let i = 0; i < n; i++) {
    if (r.peek() !== 'str') {
      r.skip();
      r.skip();
      continue;
    }
    const key = r.str(256);
    switch (key) {
      case 'type':
        if (r.peek() !== 'str') throw new EventError("an event whose 'type' is not a string");
        tag = r.str(64);
        break;
      case 'block_hashes':
        hashes = readHashes(r);
        break;
      case 'parent_block_hash':
        parent = readParent(r);
        break;
      case 'token_ids':
        tokens = readTokens(r, keep);
        break;
      case 'block_size':
        blockSize = optionalInt(r, 'block_size');
        break;
      case 'medium':
        medium = optionalStr(r, 'medium');
        break;
      case 'cache_salt':
        cacheSalt = optionalStr(r, 'cache_salt');
        break;
      case 'lora_name':
        loraName = optionalStr(r, 'lora_name');
        break;
      case 'extra_keys':
        extraKeys = readExtraKeys(r);
        break;
      default:
        r.skip(); // keys newer engines add (session_id, extra_keys, group_idx, …)
    }
  }
  if (tag === undefined) throw new EventError("an event map without 'type'");
  if (!TAGS.has(tag)) throw new EventError(`unknown event tag ${JSON.stringify(tag)}`);
  if (tag === 'AllBlocksCleared') return { kind: 'cleared' };
  if (hashes === undefined) throw new EventError(`${tag} without block_hashes`);
  if (tag === 'BlockRemoved') return { kind: 'removed', hashes, medium };
  return {
    kind: 'stored',
    hashes,
    parent,
    blockSize,
    tokenCount: tokens.count,
    tokens: tokens.ids,
    medium,
    cacheSalt,
    loraName,
    extraKeys,
  };
}

function readHashes(r: MsgpackReader): BlockHashes {
  if (r.peek() !== 'array') throw new EventError(`block_hashes is a ${r.peek()}, not an array`);
  const count = r.arrayLength();
  if (count > KV_EVENT_LIMITS.hashesPerEvent)
    throw new EventError(`${count} hashes in one event (at most ${KV_EVENT_LIMITS.hashesPerEvent})`);
  const words = new Uint32Array(2 * count);
  for (let i = 0; i < count; i++) wordOrEventError(r, words, 2 * i);
  return { count, words };
}

/**
 * A stored run's parent: nil for a run that starts a prompt. A parent hash of 0 says
 * the same: it is llm-d's `EmptyBlockHash`, which llm-d-inference-sim writes there in
 * its positional events (docs/engine-push.md §KV events); no engine's real hash is 0
 * but once in 2^64.
 */
function readParent(r: MsgpackReader): Uint32Array | null {
  if (r.nil()) return null;
  const out = new Uint32Array(2);
  wordOrEventError(r, out, 0);
  return out[0] === 0 && out[1] === 0 ? null : out;
}

function wordOrEventError(r: MsgpackReader, out: Uint32Array, at: number): void {
  const t = r.typeByte();
  if (t !== 0xcf && t !== 0xd3) {
    const k = r.peek();
    if (k !== 'int' && k !== 'bin') throw new EventError(`a block hash that is a ${k}`);
  }
  r.word64(out, at);
}

interface TokenIds {
  readonly count: number;
  readonly ids: Uint32Array | null;
}

const NO_TOKENS: TokenIds = { count: 0, ids: null };

/**
 * token_ids: counted and stepped over (SGLang sends bigram pairs under EAGLE: still
 * one entry per token), or, when `keep`, read into a Uint32Array (integers only).
 */
function readTokens(r: MsgpackReader, keep: boolean): TokenIds {
  if (r.nil()) return NO_TOKENS;
  if (r.peek() !== 'array') throw new EventError(`token_ids is a ${r.peek()}`);
  const n = r.arrayLength();
  if (!keep) {
    r.skipIntegers(n);
    return { count: n, ids: null };
  }
  const ids = new Uint32Array(n);
  const read = r.uint32s(n, ids);
  if (read < n) {
    if (r.done) throw new MsgpackError('payload ends inside token_ids');
    throw new EventError(`token id ${read} is a ${r.peek() === 'int' ? 'number outside 0..2^32' : r.peek()}, not a token id`);
  }
  return { count: n, ids };
}

function optionalInt(r: MsgpackReader, name: string): number | null {
  if (r.nil()) return null;
  const k = r.peek();
  if (k !== 'int') throw new EventError(`${name} is a ${k}, not an integer`);
  return r.number();
}

function optionalStr(r: MsgpackReader, name: string): string | null {
  if (r.nil()) return null;
  const k = r.peek();
  if (k !== 'str') throw new EventError(`${name} is a ${k}, not a string`);
  return r.str(256);
}

/** vLLM's extra_keys: one entry per block, nil for a block of plain tokens. True when any is not nil. */
function readExtraKeys(r: MsgpackReader): boolean {
  if (r.nil()) return false;
  if (r.peek() !== 'array') throw new EventError(`extra_keys is a ${r.peek()}, not an array`);
  const n = r.arrayLength();
  let any = false;
  for (let i = 0; i < n; i++) {
    if (r.nil()) continue;
    r.skip();
    any = true;
  }
  return any;
}

/** SGLang's position-7 metadata: {"cache_salt": str} (or nil). */
function readSglangMetadata(r: MsgpackReader): string | null {
  if (r.nil()) return null;
  if (r.peek() !== 'map') throw new EventError(`SGLang's BlockStored metadata is a ${r.peek()}, not a map`);
  const n = r.mapLength();
  let salt: string | null = null;
  for (let i = 0; i < n; i++) {
    const key = r.peek() === 'str' ? r.str(256) : (r.skip(), '');
    if (key === 'cache_salt') salt = optionalStr(r, 'cache_salt');
    else r.skip();
  }
  return salt;
}

/** A hash's two words as one unsigned BigInt (for display, logs and tests; the index keys by words). */
export function hashToBigInt(words: Uint32Array, i = 0): bigint {
  return (BigInt(words[2 * i]!) << 32n) | BigInt(words[2 * i + 1]!);
}
