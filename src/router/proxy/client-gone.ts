import { EventEmitter } from 'node:events';

/**
 * The abort signal of one client request: an EventEmitter that undici accepts as a
 * `signal` (it listens for 'abort' and reads `aborted`). Not an AbortController:
 * creating an AbortSignal and undici's listener on it through EventTarget cost about
 * 3 % of the router's CPU per short request in a profile (BENCHMARKS.md, section 2), and
 * nothing here needs the web API.
 */
export class ClientGone extends EventEmitter {
  #aborted = false;

  /** The client went away (or the request was given up): every listener hears it once. */
  get aborted(): boolean {
    return this.#aborted;
  }

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.emit('abort');
  }
}
