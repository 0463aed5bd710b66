/**
 * Why the router's own HTTP/1.1 client (upstream-pool.ts) gave up on
 * a request before or during its answer. System errno codes (ECONNREFUSED, ECONNRESET,
 * EHOSTUNREACH, …) pass through as the socket reported them.
 */
export type UpstreamFailureCode =
  /** No status line within the request timeout. */
  | 'UPSTREAM_HEADERS_TIMEOUT'
  /** The body stopped arriving for the request timeout (while the client was keeping up). */
  | 'UPSTREAM_BODY_TIMEOUT'
  | 'UPSTREAM_CONNECT_TIMEOUT'
  /** The TLS handshake with an https: worker failed (its certificate, mostly). */
  | 'UPSTREAM_TLS'
  /** The worker closed the connection before the response was complete. */
  | 'UPSTREAM_CLOSED'
  /** The worker's bytes are not an HTTP/1.x response. */
  | 'UPSTREAM_MALFORMED'
  /** The router closed the worker's connections (it left the fleet, or the router stops). */
  | 'UPSTREAM_DESTROYED'
  /** A request header the router would send is not a valid field (the router's fault). */
  | 'UPSTREAM_INVALID_REQUEST';

export class UpstreamFailure extends Error {
  override readonly name = 'UpstreamFailure';
  constructor(
    readonly code: UpstreamFailureCode,
    message: string,
  ) {
    super(message);
  }
}
