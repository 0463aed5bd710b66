import { Subscriber } from 'zeromq';
import { PushDecodeError } from './kv-events.js';
import { readPushFrameOr } from './push-frame.js';
import type { PushFrame } from './push-frame.js';
import { pushContext } from './zmq-context.js';

/**
 * One SUB socket on one publisher (a worker's one DP rank, KV events or load). ZMQ
 * reconnects by itself, so a publisher that is not up yet or restarts is joined when
 * it is there; frames that are not the engines' envelope are reported and dropped.
 * Nothing here blocks: frames are handed on as they arrive (docs/engine-push.md
 * §Subscriptions).
 */
export class PushSubscription {
  readonly #socket: Subscriber;
  #closed = false;
  /** Messages received, and ones that were not a push envelope. */
  received = 0;
  malformed = 0;
  /** A message that could not be read: counted and reported. */
  readonly #malformed = (err: PushDecodeError): void => {
    this.malformed++;
    this.onMalformed(err);
  };

  constructor(
    readonly endpoint: string,
    readonly topic: string,
    private readonly onFrame: (frame: PushFrame) => void,
    private readonly onMalformed: (error: PushDecodeError) => void = () => undefined,
    opts: { bind?: boolean; onBindError?: (message: string) => void } = {},
  ) {
    // linger 0: closing never waits; reconnect every 500 ms, not ZMQ's 100 ms, to spare
    // the logs and the engine a tight loop while it is down.
    this.#socket = new Subscriber({ context: pushContext(), linger: 0, reconnectInterval: 500, receiveHighWaterMark: 100_000 });
    let ready: Promise<boolean> = Promise.resolve(true);
    if (opts.bind === true) {
      // The engine connects here (llm-d-inference-sim's publisher dials its --zmq-endpoint).
      // A bind that fails (the port is taken) is reported, not thrown: the worker stays
      // routable and its feed stays empty, as with an engine that never publishes. The
      // socket cannot receive until the bind is done.
      ready = this.#socket.bind(endpoint).then(
        () => true,
        (err: Error) => {
          if (!this.#closed) opts.onBindError?.(`cannot bind ${endpoint} for the engine to connect to: ${err.message}`);
          return false;
        },
      );
    } else this.#socket.connect(endpoint);
    this.#socket.subscribe(topic);
    void this.#loop(ready);
  }

  async #loop(ready: Promise<boolean>): Promise<void> {
    if (!(await ready) || this.#closed) return;
    try {
      for await (const frames of this.#socket) {
        this.received++;
        const frame = readPushFrameOr(frames, this.#malformed);
        if (frame !== undefined) this.onFrame(frame);
      }
    } catch (err) {
      // Closing the socket ends the iteration with an error: that is the way out.
      if (!this.#closed) throw err;
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.close();
  }
}
