import type { QueueGate } from '../policies/index.js';

/** The first event (router_started): what the router runs with, so a log or pane starts with the configuration it explains. */
export function startedMessage(o: {
  workers: number;
  url: string;
  policy: string;
  gate: QueueGate;
  prefixSource: string;
  /** The endpoint picker's gRPC address, with --epp. */
  epp?: string | null;
}): string {
  const { gate } = o;
  const cacheAware =
    o.policy === 'cache_aware'
      ? `, ${gate.mode === 'fixed' ? `worker-queue-limit ${gate.limit ?? 'unset (gate off)'}` : `queue gate ${gate.mode} (${gate.rule()})`}${gate.floor !== null ? `, floor ${gate.floor}` : ''}, prefix from ${o.prefixSource}`
      : '';
  const epp = o.epp ? ` (endpoint picker on ${o.epp})` : '';
  return `routing ${o.workers} worker${o.workers === 1 ? '' : 's'} at ${o.url}${epp}: policy ${o.policy}${cacheAware}`;
}
