import type { RankReading } from '../load-formats.js';
import { PushDecodeError } from './kv-events.js';
import { MsgpackError, MsgpackReader } from '../../msgpack/index.js';

/**
 * SGLang's load push (docs/engine-push.md §LoadStat): `["LoadStat", num_running_reqs,
 * num_waiting_reqs, num_tokens, max_total_num_tokens, attn_dp_rank,
 * num_waiting_uncached_tokens?]`. Fields are only ever appended, so anything past the
 * known ones is stepped over; a map with the same names is read too. The rank the
 * payload names is informational: the socket's rank is the one a reading belongs to.
 */
export interface LoadStat {
  readonly reading: RankReading;
  readonly rank: number | null;
}

const FIELDS = [
  'num_running_reqs',
  'num_waiting_reqs',
  'num_tokens',
  'max_total_num_tokens',
  'attn_dp_rank',
  'num_waiting_uncached_tokens',
] as const;
type Field = (typeof FIELDS)[number];

export function decodeLoadStat(payload: Uint8Array): LoadStat {
  const r = new MsgpackReader(payload);
  const got: Partial<Record<Field, number | null>> = {};
  try {
    if (r.peek() === 'array') {
      const n = r.arrayLength();
      if (n === 0 || r.peek() !== 'str' || r.str(64) !== 'LoadStat')
        throw new PushDecodeError('not a LoadStat (the tag is missing or different)');
      for (let i = 1; i < n; i++) {
        const name = FIELDS[i - 1];
        if (name === undefined) r.skip();
        else got[name] = readCount(r, name);
      }
    } else if (r.peek() === 'map') {
      const n = r.mapLength();
      let tagged = false;
      for (let i = 0; i < n; i++) {
        const key = r.peek() === 'str' ? r.str(256) : (r.skip(), '');
        if (key === 'type') tagged = r.peek() === 'str' && r.str(64) === 'LoadStat';
        else if ((FIELDS as readonly string[]).includes(key)) got[key as Field] = readCount(r, key);
        else r.skip();
      }
      if (!tagged) throw new PushDecodeError('not a LoadStat (the type is missing or different)');
    } else {
      throw new PushDecodeError(`a LoadStat that is a ${r.peek()}`);
    }
    if (!r.done) throw new PushDecodeError(`${payload.length - r.pos} bytes after the LoadStat`);
  } catch (err) {
    if (err instanceof MsgpackError) throw new PushDecodeError(err.message);
    throw err;
  }
  const running = got.num_running_reqs;
  const waiting = got.num_waiting_reqs;
  if (running == null || waiting == null) throw new PushDecodeError('a LoadStat without num_running_reqs and num_waiting_reqs');
  const reading: RankReading = { running, waiting };
  if (got.num_tokens != null) reading.usedTokens = got.num_tokens;
  // 0 means the engine does not know its capacity.
  if (got.max_total_num_tokens != null && got.max_total_num_tokens > 0) reading.maxTotalTokens = got.max_total_num_tokens;
  if (got.num_waiting_uncached_tokens != null) reading.waitingUncachedTokens = got.num_waiting_uncached_tokens;
  return { reading, rank: got.attn_dp_rank ?? null };
}

/** A non-negative integer count, or nil. */
function readCount(r: MsgpackReader, name: string): number | null {
  if (r.nil()) return null;
  if (r.peek() !== 'int') throw new PushDecodeError(`${name} is a ${r.peek()}, not an integer`);
  const v = r.number();
  if (!Number.isSafeInteger(v) || v < 0) throw new PushDecodeError(`${name} is ${v}, not a count`);
  return v;
}
