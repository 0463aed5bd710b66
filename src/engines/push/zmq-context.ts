import { Context } from 'zeromq';

/**
 * The ZMQ context of the router's push subscriptions and replay requests. libzmq caps
 * a context at 1,023 sockets by default, and a router takes two per worker rank (KV
 * events and load) and one more per replay request: with the default, the 512th
 * pushing worker's subscription threw and ended the process. This context is raised
 * to libzmq's own ceiling, so what bounds the fleet is the process's descriptor limit
 * (docs/engine-load.md §Load by push). Made on first use, so that a process that
 * never subscribes starts no ZMQ threads.
 */
let shared: Context | undefined;

export function pushContext(): Context {
  if (shared === undefined) {
    shared = new Context({ blocky: false });
    shared.maxSockets = shared.maxSocketsLimit;
  }
  return shared;
}
