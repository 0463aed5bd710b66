import { PushDecodeError } from './kv-events.js';

/**
 * The engines' push envelope (docs/engine-push.md §Framing): three ZMQ frames,
 * `[topic, sequence as 8 bytes big-endian, msgpack payload]`, for KV events and for
 * SGLang's load alike. The sequence starts at 0 and grows by one per batch.
 */
export interface PushFrame {
  readonly topic: string;
  /** Exact up to 2^53; an engine would need centuries of batches to pass it. */
  readonly seq: number;
  readonly payload: Uint8Array;
}

/**
 * A subscription's one read of a message: the frame, or undefined after `malformed`
 * is told why it could not be read (both subscriptions count and report alike). Any
 * other error is a bug and is thrown.
 */
export function readPushFrameOr(frames: readonly Uint8Array[], malformed: (err: PushDecodeError) => void): PushFrame | undefined {
  try {
    return readPushFrame(frames);
  } catch (err) {
    if (!(err instanceof PushDecodeError)) throw err;
    malformed(err);
    return undefined;
  }
}

export function readPushFrame(frames: readonly Uint8Array[]): PushFrame {
  if (frames.length !== 3) throw new PushDecodeError(`a message of ${frames.length} frames (want topic, sequence, payload)`);
  const [topic, seqBytes, payload] = frames as [Uint8Array, Uint8Array, Uint8Array];
  if (seqBytes.length !== 8) throw new PushDecodeError(`a ${seqBytes.length}-byte sequence frame (want 8)`);
  const v = new DataView(seqBytes.buffer, seqBytes.byteOffset, 8);
  const hi = v.getUint32(0);
  if (hi > 0x1fffff) throw new PushDecodeError('a sequence number beyond 2^53');
  return {
    topic: Buffer.from(topic.buffer, topic.byteOffset, topic.length).toString('utf8'),
    seq: hi * 0x1_0000_0000 + v.getUint32(4),
    payload,
  };
}

/** The envelope's sequence frame (also what the simulator publishes and a replay request carries). */
export function sequenceFrame(seq: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(seq));
  return b;
}
