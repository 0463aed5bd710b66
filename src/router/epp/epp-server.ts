import { Server, ServerCredentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerDuplexStream, ServerUnaryCall, ServerWritableStream, sendUnaryData } from '@grpc/grpc-js';
import { bindError } from '../../errors/index.js';
import { services } from './proto.js';
import type { ProcessingRequest } from './proto.js';
import { PickerStream } from './picker-stream.js';
import type { PickerDeps } from './picker-stream.js';

/** The gRPC health service names GIE's protocol asks a picker to answer (docs/endpoint-picker.md §Health). */
export const HEALTH_SERVICES = {
  overall: '',
  liveness: 'liveness',
  readiness: 'readiness',
  extProc: 'envoy.service.ext_proc.v3.ExternalProcessor',
} as const;

const SERVING = 1;
const NOT_SERVING = 2;

export interface EppServerOptions extends PickerDeps {
  readonly host: string;
  readonly port: number;
  /** Ready to pick: the router is taking requests and has a routable worker. */
  readonly serving: () => boolean;
}

/**
 * The endpoint picker's gRPC server: Envoy's ext_proc `Process` (one PickerStream per
 * HTTP request) and grpc.health.v1 beside it, on --epp-host:--epp (docs/endpoint-picker.md).
 * Plaintext HTTP/2, as Envoy's picker cluster and GIE's examples speak it.
 */
export class EppServer {
  readonly #server = new Server({
    // Envoy opens one connection and multiplexes every request's stream on it.
    'grpc.max_concurrent_streams': 0x7fffffff,
    'grpc.max_receive_message_length': -1,
    'grpc.max_send_message_length': -1,
  });
  /** Open health watches: each one's resend-on-change, and its end. */
  readonly #watchers = new Map<() => void, () => void>();
  #timer: NodeJS.Timeout | undefined;
  #last = -1;
  #port = 0;

  constructor(private readonly o: EppServerOptions) {
    const { extProc, health } = services();
    this.#server.addService(extProc, {
      Process: (call: ServerDuplexStream<ProcessingRequest, object>) => void new PickerStream(call, o),
    });
    this.#server.addService(health, {
      Check: (call: ServerUnaryCall<{ service: string }, object>, done: sendUnaryData<object>) => {
        const st = this.#status(call.request.service);
        if (st === undefined) done({ code: GrpcStatus.NOT_FOUND, details: `unknown service '${call.request.service}'` });
        else done(null, { status: st });
      },
      Watch: (call: ServerWritableStream<{ service: string }, object>) => this.#watch(call),
    });
  }

  /** The port bound (after `start`). */
  get port(): number {
    return this.#port;
  }

  async start(): Promise<number> {
    const { host, port } = this.o;
    this.#port = await new Promise<number>((resolve, reject) =>
      this.#server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(bindError(host, port, err)) : resolve(p),
      ),
    );
    // Health watchers hear of a change within a second.
    this.#timer = setInterval(() => this.#tick(), 1000);
    this.#timer.unref();
    return this.#port;
  }

  /** Stop taking streams; those open go on until they end or `deadlineMs` passes, then are cut. */
  async stop(deadlineMs: number): Promise<void> {
    clearInterval(this.#timer);
    for (const end of [...this.#watchers.values()]) end();
    const graceful = new Promise<void>((resolve) => this.#server.tryShutdown(() => resolve()));
    const cut = new Promise<void>((resolve) => setTimeout(resolve, deadlineMs).unref());
    await Promise.race([graceful, cut]);
    this.#server.forceShutdown();
  }

  #status(service: string): number | undefined {
    if (service === HEALTH_SERVICES.overall || service === HEALTH_SERVICES.liveness) return SERVING;
    if (service === HEALTH_SERVICES.readiness || service === HEALTH_SERVICES.extProc) return this.o.serving() ? SERVING : NOT_SERVING;
    return undefined;
  }

  #watch(call: ServerWritableStream<{ service: string }, object>): void {
    const service = call.request.service;
    let last = this.#status(service);
    if (last === undefined) {
      // The protocol: an unknown service is SERVICE_UNKNOWN, and the watch stays open.
      call.write({ status: 3 });
    } else call.write({ status: last });
    const send = (): void => {
      const now = this.#status(service);
      if (now !== undefined && now !== last) {
        last = now;
        call.write({ status: now });
      }
    };
    const end = (): void => {
      this.#watchers.delete(send);
      call.end();
    };
    this.#watchers.set(send, end);
    call.on('cancelled', () => this.#watchers.delete(send));
    call.on('close', () => this.#watchers.delete(send));
  }

  #tick(): void {
    const now = this.o.serving() ? SERVING : NOT_SERVING;
    if (now === this.#last) return;
    this.#last = now;
    for (const send of this.#watchers.keys()) send();
  }
}
