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
import type { DecisionRecorder } from '../state/decisions/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
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
}

/**
 * The generation routes' request path (docs/routing.md): read and parse the body,
 * select once (the booked decision), then relay to the worker. Every refusal is an
 * ApiError from the catalogue; the caller turns it into the error envelope.
 */
export class GenerationPath {
  constructor(private readonly d: GenerationDeps) {}

  async handle(route: InferenceRoute, upstreamPath: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = performance.now();
    const d = this.d;
    if (!d.ready()) throw ApiErrors.shuttingDown();
    const body = await readRequestBody(req, d.config.maxBodyBytes);
    // A capture needs the prefix keys even under a policy that reads none.
    const capturing = d.capture.active;
    const parsed = parseInferenceRequest(route, body, d.relay.usesPrefix || capturing ? d.keying() : NO_KEYING);
    if (parsed.unkeyed !== undefined) d.unkeyed(parsed.unkeyed);
    const modelId = d.modelId();
    if (parsed.model !== undefined && modelId !== null && parsed.model !== modelId) throw ApiErrors.modelNotFound(parsed.model);

    const view = d.table.view(performance.now());
    if (view.workers.length === 0) throw ApiErrors.noHealthyWorkers();
    // The one booked selection; a retry selects again inside the relay, unbooked.
    const { outcome: selection, prefix } = d.relay.select(parsed, view);
    d.booker.book(selection, view.workers.length);
    if (!selection.ok) throw ApiErrors.selectionFailed();
    const recorded = d.decisions.active ? d.decisions.begin(req, selection, prefix, view, parsed.inputTokens, startedAt) : undefined;
    const trace = capturing
      ? d.capture.trace(recorded, Date.now() - (performance.now() - startedAt), parsed.inputTokens, parsed.prefixHashes)
      : recorded;

    d.inflight.enter();
    try {
      await d.relay.send({ selection, parsed, body, path: upstreamPath, req, res, startedAt, trace });
    } finally {
      d.inflight.leave();
    }
  }
}
