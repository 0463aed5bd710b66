/** How sending to one worker ended when no status line came: nothing reached the client. */
export type SendOutcome =
  /** The client went away first. */
  | { readonly kind: 'cancelled' }
  /** The worker could not be reached, or broke the connection or the protocol. */
  | { readonly kind: 'unreachable'; readonly code: string; readonly detail: string }
  /** No response headers within the request timeout. */
  | { readonly kind: 'timeout' }
  /** The router could not even build the request (argument checks, its own bug): not the worker's doing. */
  | { readonly kind: 'router_error'; readonly error: unknown };

/** How relaying a response to the client ended. */
export type RelayOutcome =
  | { readonly kind: 'completed'; readonly streamed: boolean; readonly firstByteAt: number | undefined }
  /**
   * The response broke off after the status line: the worker cut it or went silent
   * past the timeout, or (`byRouter`) the router itself tore the connection down, as
   * a shutdown that cuts in-flight requests does.
   */
  | {
      readonly kind: 'cut';
      readonly streamed: boolean;
      readonly firstByteAt: number | undefined;
      readonly timedOut: boolean;
      readonly byRouter: boolean;
    }
  | { readonly kind: 'cancelled'; readonly streamed: boolean }
  /**
   * The worker broke its response (a framing error, a close) before any byte of it
   * reached the client: nothing was relayed, so the request may go to another worker.
   */
  | { readonly kind: 'failed'; readonly streamed: boolean; readonly error: Error };

/** The send outcomes that carry nothing: one frozen object each. */
export const CANCELLED: SendOutcome = Object.freeze({ kind: 'cancelled' });
export const TIMEOUT: SendOutcome = Object.freeze({ kind: 'timeout' });
