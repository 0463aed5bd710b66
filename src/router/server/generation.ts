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
import { HOLD_CAPACITY, HOLD_RECHECK_MS, sloAdmission, sloRetryAfterS, UNSHEDDABLE_PRIORITY } from '../policies/index.js';
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
  readonly shed: (reason: 'saturated' | 'slo') => void;
  /** Requests --admission slo holds now, across both fronts' HTTP requests (bounded by HOLD_CAPACITY). */
  readonly held: HeldRequests;
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
    const prepared = this.prepare(route, body, req.headers);
    let placed = this.place(prepared, req.headers, startedAt, undefined, 'may');
    if (placed === HOLD) {
      // Held (docs/routing.md §SLO admission): placed again every HOLD_RECHECK_MS until an engine can start it in time or none could.
      d.inflight.enter();
      try {
        while (placed === HOLD) {
          await d.held.wait();
          // A client that left, or a router that began draining, ends the hold: nothing was booked.
          // (The request stream itself is over once its body was read: only the socket says the client left.)
          if (res.destroyed || req.socket.destroyed) return;
          if (!d.ready()) throw ApiErrors.shuttingDown();
          placed = this.place(prepared, req.headers, startedAt, undefined, 'held');
        }
      } finally {
        d.held.leave();
        d.inflight.leave();
      }
    }
    const { selection, parsed, trace } = placed;
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
    // The endpoint picker cannot hold: Envoy waits on its answer under ext_proc's message timeout, so a hold is a shed.
    return this.place(this.prepare(route, body, headers), headers, startedAt, narrow, 'never') as Admitted;
  }

  /** Parse the body and check its model: what every placement of the request reads. */
  private prepare(route: InferenceRoute, body: BodyChunks, headers: RequestHeaders): Prepared {
    const d = this.d;
    // A capture needs the prefix keys even under a policy that reads none.
    const capturing = d.capture.active;
    const parsed = parseInferenceRequest(route, body, d.relay.usesPrefix || capturing ? d.keying() : NO_KEYING);
    if (parsed.unkeyed !== undefined) d.unkeyed(parsed.unkeyed);
    const modelId = d.modelId();
    if (parsed.model !== undefined && modelId !== null && parsed.model !== modelId) throw ApiErrors.modelNotFound(parsed.model);
    return { parsed, priority: requestPriority(headers[PRIORITY_HEADER]), capturing };
  }

  /**
   * Select once and book it, or refuse; under --admission slo, HOLD when no engine is
   * predicted to start the request in time yet, though one still could, and it may be held:
   * `may` takes a place among the held (none left: shed), `held` already has one.
   */
  private place(
    { parsed, priority, capturing }: Prepared,
    headers: RequestHeaders,
    startedAt: number,
    narrow: ((view: PoolState & LoadView) => PoolState & LoadView) | undefined,
    hold: 'never' | 'may' | 'held',
  ): Admitted | typeof HOLD {
    const d = this.d;
    const pool: PoolState & LoadView = d.table.view(performance.now());
    const view = narrow === undefined ? pool : narrow(pool);
    if (view.workers.length === 0) throw ApiErrors.noHealthyWorkers();
    // A request that said it may be shed is refused while every worker is queued, before it is booked.
    if (priority < 0 && d.saturated(view)) {
      d.shed('saturated');
      throw ApiErrors.shed();
    }
    // The one booked selection; a retry selects again inside the relay, unbooked.
    const { outcome: selection, prefix } = d.relay.select(parsed, view);
    // SLO admission asks before the booking: a held or shed request was never routed.
    const goalMs = d.config.admission === 'slo' ? d.config.ttftSloMs : null;
    if (selection.ok && goalMs !== null && priority < UNSHEDDABLE_PRIORITY) {
      const own = d.relay.uncachedTokens(selection.worker, parsed);
      const verdict = sloAdmission(goalMs, performance.now() - startedAt, selection.worker, own, view);
      if (verdict === 'hold' && (hold === 'held' || (hold === 'may' && d.held.enter()))) return HOLD;
      if (verdict !== 'admit') {
        d.shed('slo');
        throw ApiErrors.shedSlo(goalMs, sloRetryAfterS(selection.worker, own, view));
      }
    }
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

/** A placement's answer for a request held for now (docs/routing.md §SLO admission). */
const HOLD = Symbol('hold');

/** A request parsed for placement: what each placement of it reads. */
interface Prepared {
  readonly parsed: InferenceRequest;
  readonly priority: number;
  /** A capture listens: the request's prefix keys go to it. */
  readonly capturing: boolean;
}

/**
 * The requests --admission slo holds, counted against HOLD_CAPACITY, and the pause between
 * two placements of one (HOLD_RECHECK_MS).
 */
export class HeldRequests {
  #count = 0;

  constructor(readonly capacity = HOLD_CAPACITY) {}

  /** Held now. */
  get count(): number {
    return this.#count;
  }

  /** Take a place; false when every place is taken (the request is shed instead). */
  enter(): boolean {
    if (this.#count >= this.capacity) return false;
    this.#count++;
    return true;
  }

  leave(): void {
    this.#count--;
  }

  /** Until the next placement. */
  wait(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, HOLD_RECHECK_MS));
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
