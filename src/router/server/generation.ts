import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouterConfig } from '../../config/index.js';
import type { SelectionBooker } from '../metrics/selection-booker.js';
import type { Relay } from '../proxy/relay.js';
import { parseInferenceRequest } from '../request/inference-request.js';
import type { InferenceRoute } from '../request/inference-request.js';
import { NO_KEYING } from '../request/request-keying.js';
import type { RequestKeying, UnkeyedReason } from '../request/request-keying.js';
import { readRequestBody } from '../request/read-body.js';
import type { RequestCapture } from '../state/capture/index.js';
import type { DecisionRecorder, RequestTrace } from '../state/decisions/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { BodyChunks } from '../../net/index.js';
import type { LoadView, PoolState, SelectionSuccess } from '../policies/index.js';
import type { InferenceRequest } from '../request/inference-request.js';
import { ApiErrors } from '../api-error/api-error.js';
import type { InflightRequests } from './inflight.js';

export interface GenerationDeps {
  readonly config: RouterConfig;
  readonly table: LoadTable;
  readonly relay: Relay;
  readonly booker: SelectionBooker;
  readonly inflight: InflightRequests;
  /** The model this router serves; null until known (any model name is accepted). */
  readonly modelId: () => string | null;
  readonly ready: () => boolean;
  /** How requests are keyed for the prefix index (decided at start: docs/routing.md §Keying requests). */
  readonly keying: () => RequestKeying;
  /** A request the keying could not key: routed without prefix affinity, and counted. */
  readonly unkeyed: (reason: UnkeyedReason) => void;
  /** Records each routed request's decision (docs/decisions.md). */
  readonly decisions: DecisionRecorder;
  /** Hands completed requests to GET /admin/capture while someone listens (docs/bench.md §Capture). */
  readonly capture: RequestCapture;
  /** Whether every worker in the view is queued past the gate: a sheddable request is refused then. */
  readonly saturated: (view: LoadView & PoolState) => boolean;
  /** A request was shed, for this reason: counted. */
  readonly shed: (reason: 'saturated') => void;
}

/** Request headers as node:http and the picker both hold them. */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** A request the router took: parsed, selected and booked, its decision begun; the body as read. */
export interface Admitted {
  readonly selection: SelectionSuccess;
  readonly parsed: InferenceRequest;
  readonly trace: RequestTrace | undefined;
}

/**
 * The generation routes' request path (docs/routing.md): read and parse the body,
 * select once (the booked decision), then relay to the worker. Every refusal is an
 * ApiError from the catalogue; the caller turns it into the error envelope. The
 * endpoint picker (docs/endpoint-picker.md) takes requests through the same `admit`.
 */
export class GenerationPath {
  constructor(private readonly d: GenerationDeps) {}

  async handle(route: InferenceRoute, upstreamPath: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = performance.now();
    const d = this.d;
    if (!d.ready()) throw ApiErrors.shuttingDown();
    const body = await readRequestBody(req, d.config.maxBodyBytes);
    const { selection, parsed, trace } = this.admit(route, body, req.headers, startedAt);
    d.inflight.enter();
    try {
      await d.relay.send({ selection, parsed, body, path: upstreamPath, req, res, startedAt, trace });
    } finally {
      d.inflight.leave();
    }
  }

  /**
   * Parse the body, select once and book it, and begin the decision record: every
   * front's way in (the HTTP front above, the endpoint picker). Throws the ApiError
   * the client is to get.
   */
  admit(
    route: InferenceRoute,
    body: BodyChunks,
    headers: RequestHeaders,
    startedAt: number,
    /** The pool narrowed, where a gateway allows only some of its endpoints. */
    narrow?: (view: PoolState & LoadView) => PoolState & LoadView,
  ): Admitted {
    const d = this.d;
    // A capture needs the prefix keys even under a policy that reads none.
    const capturing = d.capture.active;
    const parsed = parseInferenceRequest(route, body, d.relay.usesPrefix || capturing ? d.keying() : NO_KEYING);
    if (parsed.unkeyed !== undefined) d.unkeyed(parsed.unkeyed);
    const modelId = d.modelId();
    if (parsed.model !== undefined && modelId !== null && parsed.model !== modelId) throw ApiErrors.modelNotFound(parsed.model);

    const pool: PoolState & LoadView = d.table.view(performance.now());
    const view = narrow === undefined ? pool : narrow(pool);
    if (view.workers.length === 0) throw ApiErrors.noHealthyWorkers();
    // A request that said it may be shed is refused while every worker is queued, before it is booked.
    const priority = requestPriority(headers[PRIORITY_HEADER]);
    if (priority < 0 && d.saturated(view)) {
      d.shed('saturated');
      throw ApiErrors.shed();
    }
    // The one booked selection; a retry selects again inside the relay, unbooked.
    const { outcome: selection, prefix } = d.relay.select(parsed, view);
    d.booker.book(selection, view.workers.length);
    if (!selection.ok) throw ApiErrors.selectionFailed();
    const recorded = d.decisions.active
      ? d.decisions.begin(headers['x-request-id'], selection, prefix, view, parsed.inputTokens, startedAt)
      : undefined;
    const trace = capturing
      ? d.capture.trace(recorded, Date.now() - (performance.now() - startedAt), parsed.inputTokens, parsed.prefixHashes)
      : recorded;
    return { selection, parsed, trace };
  }
}

/** The request header that carries a request's priority: below 0, it may be shed (docs/routing.md §Shedding). */
export const PRIORITY_HEADER = 'x-routerctl-priority';

/** A request's priority, as GIE's InferenceObjective has it: an integer, 0 when absent or unreadable. */
export function requestPriority(value: string | string[] | undefined): number {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || !/^\s*[+-]?\d{1,9}\s*$/.test(v)) return 0;
  return Number(v);
}
