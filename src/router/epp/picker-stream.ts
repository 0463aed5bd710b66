import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { BodyChunks } from '../../net/index.js';
import { ApiError, ApiErrors, errorEnvelope } from '../api-error/api-error.js';
import type { Logger } from '../logging/logger.js';
import { CANCELLED } from '../proxy/outcomes.js';
import { Taken } from '../proxy/relay.js';
import type { Relay } from '../proxy/relay.js';
import type { AttemptEnd } from '../proxy/settlement.js';
import { isFailureStatus } from '../proxy/settlement.js';
import { requireJsonContentType } from '../request/content-type.js';
import { GENERATION_ROUTES } from '../request/inference-route.js';
import type { GenerationPath } from '../server/generation.js';
import type { InflightRequests } from '../server/inflight.js';
import type { RequestTrace } from '../state/decisions/index.js';
import type { Worker } from '../upstream/worker.js';
import { headerRecord, setHeaders, stringStruct } from './proto.js';
import type { ProcessingRequest, StructValue } from './proto.js';
import type { EndpointChoice } from './endpoint-choice.js';

/** The header and metadata key GIE's protocol names for the pick (docs/endpoint-picker.md §The wire). */
export const DESTINATION = 'x-gateway-destination-endpoint';
const LB_NAMESPACE = 'envoy.lb';
const SUBSET_NAMESPACE = 'envoy.lb.subset_hint';
const SUBSET_KEY = 'x-gateway-destination-endpoint-subset';

/** What one stream needs from the router. */
export interface PickerDeps {
  readonly generation: GenerationPath;
  readonly relay: Relay;
  readonly choice: EndpointChoice;
  readonly inflight: InflightRequests;
  readonly maxBodyBytes: number;
  readonly ready: () => boolean;
  readonly log: Logger;
  /** A generation request was picked, this many seconds after its body ended: sgl_router_epp_pick_duration_seconds. */
  readonly picked: (seconds: number) => void;
}

/** Where the stream is: collecting the request, waiting for the engine's head, watching its body, over. */
type Phase = 'request' | 'picked' | 'response' | 'over';

/**
 * One HTTP request as Envoy's ext_proc stream shows it, in FULL_DUPLEX_STREAMED mode
 * (docs/endpoint-picker.md §One request on the stream): the request headers are held
 * until the body has come, then the request is admitted, selected and booked as the
 * HTTP front does it (GenerationPath.admit), the worker taken as the relay takes it
 * (Relay.take), and the pick answered; the response passes back through, each chunk
 * echoed, watched for its first byte and its usage; its end, or the stream's, settles
 * the attempt through the relay's one settlement (Relay.finish). The picker never opens
 * a connection to an engine: Envoy carries the bytes.
 */
export class PickerStream {
  #phase: Phase = 'request';
  #headers: Record<string, string> = {};
  readonly #chunks: Buffer[] = [];
  #length = 0;
  #started = 0;
  #trailers = false;
  // The attempt, once picked.
  #taken: Taken | undefined;
  #stream = false;
  #trace: RequestTrace | undefined;
  #own: (() => void) | undefined;
  #status = 0;
  #firstByteAt: number | undefined;
  /** The gateway's subset hint, when its request metadata carried one. */
  #subset: ReadonlySet<string> | undefined;

  constructor(
    private readonly call: ServerDuplexStream<ProcessingRequest, object>,
    private readonly d: PickerDeps,
  ) {
    call.on('data', (m: ProcessingRequest) => this.#onMessage(m));
    // Envoy half-closes when the HTTP request is over, and cancels when it abandons it.
    call.on('end', () => {
      this.#abandon();
      this.#close();
    });
    call.on('cancelled', () => this.#abandon());
    call.on('error', () => this.#abandon());
    call.on('close', () => this.#abandon());
  }

  #onMessage(m: ProcessingRequest): void {
    try {
      switch (m.request) {
        case 'request_headers':
          this.#started = performance.now();
          this.#headers = headerRecord(m.request_headers);
          this.#subset = subsetOf(m.metadata_context?.filter_metadata?.[SUBSET_NAMESPACE]);
          if (m.request_headers?.end_of_stream === true) this.#pick();
          return;
        case 'request_body': {
          const body = m.request_body?.body;
          if (body !== undefined && body.length > 0) {
            this.#length += body.length;
            if (this.#length > this.d.maxBodyBytes) return this.#refuse(ApiErrors.payloadTooLarge(this.d.maxBodyBytes));
            this.#chunks.push(body);
          }
          if (m.request_body?.end_of_stream === true) this.#pick();
          return;
        }
        case 'request_trailers':
          // A request with trailers ends with them, not with a body chunk.
          this.#trailers = true;
          if (this.#phase === 'request') this.#pick();
          this.#write({ request_trailers: {} });
          return;
        case 'response_headers':
          return this.#onResponseHead(headerRecord(m.response_headers), m.response_headers?.end_of_stream === true);
        case 'response_body':
          return this.#onResponseBody(m.response_body?.body, m.response_body?.end_of_stream === true);
        case 'response_trailers':
          this.#write({ response_trailers: {} });
          this.#settle();
          return;
        default:
          return;
      }
    } catch (err) {
      if (err instanceof ApiError) return this.#refuse(err);
      // A router bug must not leave Envoy waiting on this request.
      this.d.log.error('endpoint picker failed on a request', { error: (err as Error).message });
      this.#refuse(ApiErrors.internal());
    }
  }

  /** The request is whole: admit it, take a worker, and answer the held headers, then the body. */
  #pick(): void {
    if (this.#phase !== 'request') return;
    const bodyEnd = performance.now();
    const d = this.d;
    const h = this.#headers;
    const path = (h[':path'] ?? '/').split('?', 1)[0]!;
    const route = (h[':method'] ?? 'GET') === 'POST' ? GENERATION_ROUTES[path] : undefined;
    let worker: Worker;
    if (!d.ready()) return this.#refuse(ApiErrors.shuttingDown());
    if (route === undefined) {
      // Not a generation request (GET /v1/models, /health): any routable engine answers it, unbooked.
      const any = d.choice.any(this.#subset);
      if (any === undefined) return this.#refuse(ApiErrors.noHealthyWorkers());
      worker = any;
    } else {
      requireJsonContentType(h['content-type']);
      const body: BodyChunks = { chunks: this.#chunks, length: this.#length };
      const subset = this.#subset;
      const narrow = subset === undefined ? undefined : (v: Parameters<EndpointChoice['narrow']>[0]) => d.choice.narrow(v, subset);
      const { selection, parsed, trace } = d.generation.admit(route, body, h, this.#started, narrow);
      worker = selection.worker as Worker;
      const taken = d.relay.take(worker, parsed);
      if (!(taken instanceof Taken)) {
        trace?.done(taken.error.status, undefined);
        return this.#refuse(taken.error);
      }
      this.#taken = taken;
      this.#stream = parsed.stream;
      this.#trace = trace;
      this.#own = d.relay.firstByte(taken, parsed);
      // Counted in flight while a worker is taken, so a drain waits for the picker's requests too.
      d.inflight.enter();
    }
    this.#phase = 'picked';
    const endpoint = d.choice.endpoint(worker);
    this.#write({
      request_headers: {
        response: { clear_route_cache: true, header_mutation: setHeaders({ [DESTINATION]: endpoint }) },
      },
      dynamic_metadata: { fields: { [LB_NAMESPACE]: { structValue: stringStruct({ [DESTINATION]: endpoint }) } } },
    });
    // FULL_DUPLEX_STREAMED: the body goes back as a streamed mutation, never a plain body answer (GIE#3035).
    if (this.#length > 0 || route !== undefined)
      this.#write({
        request_body: {
          response: {
            body_mutation: { streamed_response: { body: Buffer.concat(this.#chunks, this.#length), end_of_stream: !this.#trailers } },
          },
        },
      });
    this.#chunks.length = 0;
    if (route !== undefined) d.picked((performance.now() - bodyEnd) / 1000);
  }

  #onResponseHead(h: Record<string, string>, endOfStream: boolean): void {
    this.#status = Number(h[':status'] ?? 0);
    this.#phase = 'response';
    const extra = this.#trace?.headers;
    this.#write({ response_headers: { response: extra ? { header_mutation: setHeaders(extra) } : {} } });
    if (endOfStream) this.#settle();
  }

  #onResponseBody(body: Buffer | undefined, endOfStream: boolean): void {
    if (body !== undefined && body.length > 0) {
      if (this.#firstByteAt === undefined) {
        this.#firstByteAt = performance.now();
        // Only a 2xx on its way to the client makes its worker the owner of the prefix.
        if (this.#status >= 200 && this.#status < 300) this.#own?.();
      }
      this.#trace?.onChunk?.(body);
    }
    this.#write({
      response_body: { response: { body_mutation: { streamed_response: { body: body ?? Buffer.alloc(0), end_of_stream: endOfStream } } } },
    });
    if (endOfStream) this.#settle();
  }

  /** The response ended whole: settle it as the relay settles a relayed one, and end the stream from this side. */
  #settle(): void {
    if (this.#phase === 'over') return;
    // Envoy has nothing more to send once the response is over: a stream the picker leaves open is one Envoy resets later.
    this.#close();
    const status = this.#status;
    const end: AttemptEnd = isFailureStatus(status)
      ? { at: 'status', status }
      : { at: 'relay', status, relayed: { kind: 'completed', streamed: this.#stream, firstByteAt: this.#firstByteAt } };
    this.#finish(end);
  }

  /** The stream ended before the response did: Envoy abandoned the request (the client left, or the engine cut it). */
  #abandon(): void {
    if (this.#phase === 'over') return;
    const end: AttemptEnd =
      this.#phase === 'response'
        ? { at: 'relay', status: this.#status, relayed: { kind: 'cancelled', streamed: this.#stream } }
        : { at: 'send', sent: CANCELLED, workerRemoved: false };
    this.#finish(end);
  }

  #finish(end: AttemptEnd): void {
    this.#phase = 'over';
    const taken = this.#release();
    if (taken !== undefined) this.d.relay.finish(taken, end, this.#stream, this.#started, this.#trace);
  }

  /** Let go of the taken worker, if any: out of the router's in-flight count; the caller settles or abandons it. */
  #release(): Taken | undefined {
    const taken = this.#taken;
    if (taken === undefined) return undefined;
    this.#taken = undefined;
    this.d.inflight.leave();
    return taken;
  }

  /** Answer the request here with the router's error envelope: Envoy sends it to the client. */
  #refuse(err: ApiError): void {
    const taken = this.#release();
    if (taken !== undefined) this.d.relay.abandon(taken);
    this.#phase = 'over';
    const body = JSON.stringify(errorEnvelope(err));
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-router-error-code': err.code };
    for (const [k, v] of Object.entries(err.headers)) if (k !== 'connection') headers[k] = v;
    this.#write({
      immediate_response: { status: { code: err.status }, headers: setHeaders(headers), body: Buffer.from(body), details: err.code },
    });
    this.#close();
  }

  #closed = false;

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.call.destroyed) this.call.end();
  }

  #write(msg: object): void {
    if (this.call.writable && !this.call.destroyed) this.call.write(msg);
  }
}

/** The subset hint's endpoints (`envoy.lb.subset_hint`), or undefined when the gateway sent none. */
function subsetOf(ns: StructValue | undefined): ReadonlySet<string> | undefined {
  const v = ns?.fields?.[SUBSET_KEY];
  if (v === undefined) return undefined;
  const list = v.listValue?.values?.map((x) => x.stringValue ?? '') ?? (v.stringValue ? v.stringValue.split(',') : []);
  return new Set(list.map((x) => x.trim()).filter((x) => x !== ''));
}
