import { Dealer } from 'zeromq';
import { PushDecodeError } from './kv-events.js';
import { sequenceFrame } from './push-frame.js';
import { pushContext } from './zmq-context.js';

/** One batch as the replay socket returns it. */
export interface ReplayedBatch {
  readonly seq: number;
  readonly payload: Uint8Array;
}

/** A replay answer never needs more than the publisher's buffer (10,000 batches by default). */
const MAX_REPLAYED = 20_000;

/**
 * Ask a publisher's replay socket (a ZMQ ROUTER) for every batch it still holds from
 * `from` on (docs/engine-push.md §Sequence and replay): send `["", from]`, read
 * `["", seq, payload]` until the end marker `["", -1, ""]`; vLLM (0.32) puts the topic
 * before the sequence, `["", topic, seq, payload]`, and `["", "", -1, ""]` at the end,
 * and both shapes are read. Resolves with what came
 * before the end marker or the timeout, oldest first; a publisher that no longer
 * holds `from` answers from its oldest batch, which the caller sees as a shortfall.
 */
export async function replayFrom(
  endpoint: string,
  from: number,
  timeoutMs: number,
): Promise<{ batches: ReplayedBatch[]; complete: boolean }> {
  const socket = new Dealer({ context: pushContext(), linger: 0, receiveTimeout: timeoutMs, sendTimeout: timeoutMs });
  const batches: ReplayedBatch[] = [];
  try {
    socket.connect(endpoint);
    await socket.send([Buffer.alloc(0), sequenceFrame(from)]);
    for (;;) {
      let frames: Buffer[];
      try {
        frames = await socket.receive();
      } catch {
        return { batches, complete: false }; // timed out
      }
      // A REQ-style empty delimiter first, then (topic,) seq and payload.
      const rest = frames[0]?.length === 0 ? frames.slice(1) : frames;
      const body = rest.length === 3 ? rest.slice(1) : rest;
      if (body.length !== 2 || body[0]!.length !== 8) throw new PushDecodeError(`a replay message of ${rest.length} frames`);
      const seq = body[0]!.readBigInt64BE(0);
      if (seq === -1n) return { batches, complete: true };
      if (seq < 0n || seq > BigInt(Number.MAX_SAFE_INTEGER)) throw new PushDecodeError(`a replayed sequence number ${seq}`);
      batches.push({ seq: Number(seq), payload: body[1]! });
      if (batches.length > MAX_REPLAYED) throw new PushDecodeError(`more than ${MAX_REPLAYED} replayed batches`);
    }
  } finally {
    socket.close();
  }
}
