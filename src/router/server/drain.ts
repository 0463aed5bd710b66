import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logging/logger.js';

export interface DrainOptions {
  server: Server;
  sockets: Set<Socket>;
  /** The ceiling: --shutdown-drain-secs in ms. */
  drainMs: number;
  /** The readiness pause: --shutdown-readiness-secs in ms, at most drainMs. Without it, the pause lasts the whole drain. */
  pauseMs?: number | undefined;
  /** Requests in flight now. */
  inflight(): number;
  /** Resolves once nothing is in flight. */
  idle(): Promise<void>;
  /** Resolves to end the readiness pause: stop accepting now and end as soon as nothing is in flight. */
  skipPause?: Promise<void> | undefined;
  /** Resolves to cut what is left at once (a second stop request). */
  cutNow?: Promise<void> | undefined;
  /** After a cut: the upstream requests are being aborted, so their connections are dropped rather than waited for. */
  afterCut?: () => void;
  log: Logger;
}

const never = new Promise<never>(() => {});

/**
 * The HTTP side of a shutdown with a ceiling (docs/http-edge.md, "Shutdown and
 * signals"). The caller has already turned /readyz to 503. Then:
 *
 * 1. the readiness pause: the listener stays open (a load balancer keeps getting 503
 *    from /readyz until it stops sending) and in-flight requests go on, until
 *    `pauseMs` has passed, or `skipPause` resolves;
 * 2. the listener closes and idle keep-alive connections end, and the drain ends as
 *    soon as nothing is in flight, at the latest at `drainMs` from the start;
 * 3. what is still in flight is cut (every connection destroyed), with one log line
 *    saying how many requests that was. `cutNow` jumps straight here.
 *
 * Resolves to the number of requests cut: 0 is a clean drain.
 */
export async function drainServer(o: DrainOptions): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((r) => (timer = setTimeout(() => r('deadline'), o.drainMs)));
  const cut = (o.cutNow ?? never).then(() => 'cut' as const);
  let pauseTimer: NodeJS.Timeout | undefined;
  const pauseMs = Math.min(o.pauseMs ?? o.drainMs, o.drainMs);
  const pause = pauseMs >= o.drainMs ? never : new Promise<'skip'>((r) => (pauseTimer = setTimeout(() => r('skip'), pauseMs)));
  let ended: 'deadline' | 'cut' | 'skip' | 'idle' = await Promise.race([
    deadline,
    cut,
    pause,
    (o.skipPause ?? never).then(() => 'skip' as const),
  ]);
  clearTimeout(pauseTimer);

  const closed = new Promise<void>((r) => o.server.close(() => r()));
  o.server.closeIdleConnections();
  if (ended === 'skip') ended = o.inflight() === 0 ? 'idle' : await Promise.race([deadline, cut, o.idle().then(() => 'idle' as const)]);
  clearTimeout(timer);

  const left = o.inflight();
  const took_s = Math.round((performance.now() - started) / 100) / 10;
  if (left > 0) {
    o.log.warn(ended === 'cut' ? 'second stop request: cutting in-flight requests' : 'drain time is up: cutting in-flight requests', {
      cut: left,
      drain_s: o.drainMs / 1000,
      took_s,
    });
  } else {
    o.log.info('drained: no request in flight', { took_s });
  }
  for (const s of o.sockets) s.destroy();
  // Every connection is gone, so this is prompt; bounded all the same.
  await Promise.race([closed, new Promise((r) => setTimeout(r, 1000).unref())]);
  if (left > 0) o.afterCut?.();
  // Cut requests unwind on the next turns of the event loop (their upstream aborts
  // settle); let them, within a bound, so that a caller sees nothing in flight.
  if (o.inflight() > 0) await Promise.race([o.idle(), new Promise((r) => setTimeout(r, 500).unref())]);
  return left;
}
