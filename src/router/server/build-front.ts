import type { RouterConfig } from '../../config/index.js';
import type { Logger } from '../logging/logger.js';
import type { RouterMetrics } from '../metrics/index.js';
import { SelectionBooker } from '../metrics/selection-booker.js';
import type { Policy, QueueGate } from '../policies/index.js';
import type { PrefixState } from '../prefix-source/prefix-state.js';
import { UnkeyedRequests } from '../prefix-source/unkeyed-requests.js';
import type { Relay } from '../proxy/relay.js';
import type { RequestCapture } from '../state/capture/index.js';
import { DecisionRecorder, RequestIds } from '../state/decisions/index.js';
import type { DecisionRing } from '../state/decisions/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import { tokenDigest } from './admin-api.js';
import type { AdminDocuments } from './admin-documents.js';
import { GenerationPath } from './generation.js';
import type { HeldRequests } from './generation.js';
import { HttpFront } from './http-front.js';
import type { InflightRequests } from './inflight.js';
import { routeTable } from './routes.js';
import type { Membership } from '../membership/fleet-membership.js';
import type { ServedModel } from '../workers/served-model.js';

/** The router's parts the front reads (the Router holds them all). */
export interface FrontParts {
  readonly config: RouterConfig;
  readonly gate: QueueGate;
  readonly table: LoadTable;
  readonly metrics: RouterMetrics;
  readonly policy: Policy;
  readonly decisions: DecisionRing;
  readonly capture: RequestCapture;
  /** The model this router serves; its id null until known (any model name is accepted). */
  readonly served: ServedModel;
}

export interface FrontSources {
  readonly relay: Relay;
  /** The requests --admission slo holds (docs/routing.md §SLO admission). */
  readonly held: HeldRequests;
  readonly log: Logger;
  readonly documents: AdminDocuments;
  readonly inflight: InflightRequests;
  readonly prefix: PrefixState;
  readonly startedAt: number;
  readonly ready: () => boolean;
  readonly membership: Membership;
}

/**
 * The HTTP front over its routes: the generation path with its booker and decision
 * recorder (each reading the router's one gate), and the read-only and admin routes.
 * The generation path is returned too: the endpoint picker admits requests through it.
 */
export function createHttpFront(p: FrontParts, s: FrontSources): { front: HttpFront; generation: GenerationPath } {
  const { config, gate, table, metrics, policy, decisions, capture } = p;
  const { relay, log, ready, prefix } = s;
  const model = (): string => p.served.label;
  const modelId = (): string | null => p.served.id;
  const unkeyed = new UnkeyedRequests(metrics, log);
  const generation = new GenerationPath({
    config,
    table,
    relay,
    booker: new SelectionBooker(metrics, log, policy.name, model, gate),
    inflight: s.inflight,
    modelId,
    ready,
    keying: () => prefix.keying,
    unkeyed: (reason) => unkeyed.seen(reason),
    decisions: new DecisionRecorder({
      ring: decisions,
      ids: new RequestIds(),
      metrics,
      model,
      policy: policy.name,
      gate,
      header: config.decisionHeader,
      tokenBlockSize: () => prefix.tokenBlockSize,
    }),
    capture,
    // O(1): the pool's counters (queue-gate.ts).
    saturated: (view) => gate.allQueued(view),
    shed: (reason) => metrics.shed.inc([reason]),
    held: s.held,
  });
  const routes = routeTable({
    generation,
    metrics,
    decisions,
    capture,
    modelId,
    startedAt: s.startedAt,
    ready,
    poolSize: () => table.view(performance.now()).workers.length,
    documents: s.documents,
    keyBlockSize: () => prefix.keyBlockSize,
    membership: s.membership,
  });
  const front = new HttpFront({
    routes,
    metrics,
    log,
    ready,
    adminTokenDigest: config.adminToken ? tokenDigest(config.adminToken) : undefined,
  });
  return { front, generation };
}
