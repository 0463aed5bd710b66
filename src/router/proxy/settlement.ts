import { ApiErrors } from '../api-error/api-error.js';
import type { ApiError } from '../api-error/api-error.js';
import { outcomeFromStatus } from '../metrics/index.js';
import type { RequestOutcome, StreamOutcome } from '../metrics/index.js';
import type { RelayOutcome, SendOutcome } from './outcomes.js';
import { classifyUpstreamError } from './upstream-error.js';

/** Why one attempt did not answer the client, and whether another worker may try. */
export interface AttemptFailure {
  readonly error: ApiError;
  /** sgl_router_retries_total{reason} if a retry follows. */
  readonly cause: string;
  readonly retryable: boolean;
}

/** Where an attempt ended: before its status line, at a failure status read away, or relaying. */
export type AttemptEnd =
  | { readonly at: 'send'; readonly sent: SendOutcome; readonly workerRemoved: boolean }
  | { readonly at: 'status'; readonly status: number }
  | { readonly at: 'relay'; readonly status: number; readonly relayed: RelayOutcome };

/**
 * What an attempt's end means, decided in one place (docs/retries-and-breaker.md
 * §Outcomes of one attempt): the breaker's verdict, the worker's booking
 * (`sgl_router_worker_requests_total`), a stream's, whether its duration counts, and
 * what the client is owed if this was the last attempt (undefined: it had its answer,
 * or it left). A line for the log where the end is worth one.
 */
export interface Settlement {
  readonly verdict: 'success' | 'failure' | 'backpressure' | 'release';
  readonly booking: RequestOutcome | null;
  readonly stream: StreamOutcome | null;
  readonly duration: boolean;
  /** When the first byte of a streamed 200 reached the client: its TTFT counts from the request's start. */
  readonly ttftAt?: number | undefined;
  readonly failure: AttemptFailure | undefined;
  readonly log?: { readonly level: 'warn' | 'error'; readonly msg: string; readonly fields: Record<string, unknown> };
}

const ANSWERED = undefined;

/** A status the client never gets from the worker: read away, and answered with the router's envelope. */
export function isFailureStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Each way an attempt can end, as a row: pure, so each is a table test (test/router/settlement.test.ts). */
export function settle(end: AttemptEnd, streamRequested: boolean): Settlement {
  switch (end.at) {
    case 'send':
      return SEND[end.sent.kind](end.sent as never, end.workerRemoved, streamRequested);
    case 'status':
      // A failure status is never relayed: the client gets the router's envelope, from whichever attempt was last.
      return {
        verdict: end.status === 429 || end.status === 503 ? 'backpressure' : 'failure',
        booking: outcomeFromStatus(end.status),
        stream: null,
        duration: false,
        failure: { error: statusError(end.status), cause: `status_${end.status}`, retryable: true },
      };
    case 'relay':
      return RELAY[end.relayed.kind](end.relayed as never, end.status);
  }
}

type SendRow<K extends SendOutcome['kind']> = (
  sent: Extract<SendOutcome, { kind: K }>,
  workerRemoved: boolean,
  streamRequested: boolean,
) => Settlement;

const SEND: { readonly [K in SendOutcome['kind']]: SendRow<K> } = {
  cancelled: (_s, _r, stream) => ({
    verdict: 'release',
    booking: 'cancelled',
    stream: stream ? 'client_disconnect' : null,
    duration: false,
    failure: ANSWERED,
  }),
  // The worker left the fleet under it (its drain time ran out): nothing reached the client, so another takes it.
  // Otherwise not the worker's failure: no verdict, no retry (it would fail alike anywhere).
  router_error: (s, removed) =>
    removed
      ? {
          verdict: 'release',
          booking: null,
          stream: null,
          duration: false,
          failure: fail(ApiErrors.upstreamUnreachable(), 'worker_removed'),
        }
      : {
          verdict: 'release',
          booking: null,
          stream: null,
          duration: false,
          failure: { error: ApiErrors.internal(), cause: 'internal', retryable: false },
          log: { level: 'error', msg: 'router error sending a request to a worker', fields: { error: messageOf(s.error) } },
        },
  // Not retried: the worker may still be working on it, and a second wait would take the client past the timeout.
  timeout: () => ({
    verdict: 'failure',
    booking: 'error',
    stream: null,
    duration: false,
    failure: { error: ApiErrors.upstreamTimeout(), cause: 'timeout', retryable: false },
  }),
  // Bytes that are not an answer (a 101 it never asked for, a broken head) are said in the log; a refused connection is not.
  unreachable: (s) =>
    s.code === 'UPSTREAM_MALFORMED'
      ? {
          verdict: 'failure',
          booking: 'error',
          stream: null,
          duration: false,
          failure: fail(ApiErrors.upstreamUnreachable(), 'malformed'),
          log: { level: 'warn', msg: 'worker answered with a malformed response', fields: { error: s.detail } },
        }
      : { verdict: 'failure', booking: 'error', stream: null, duration: false, failure: fail(ApiErrors.upstreamUnreachable(), 'connect') },
};

type RelayRow<K extends RelayOutcome['kind']> = (relayed: Extract<RelayOutcome, { kind: K }>, status: number) => Settlement;

const RELAY: { readonly [K in RelayOutcome['kind']]: RelayRow<K> } = {
  // Only a response that completed is a success.
  completed: (r, status) => ({
    verdict: 'success',
    booking: outcomeFromStatus(status),
    stream: r.streamed ? 'ok' : null,
    duration: true,
    ttftAt: r.streamed && status === 200 ? r.firstByteAt : undefined,
    failure: ANSWERED,
  }),
  // Cut after the head: never retried, since bytes may have reached the client. A cut the router
  // made itself (its pool torn down) is no verdict on the worker.
  cut: (r) => ({
    verdict: r.byRouter ? 'release' : 'failure',
    booking: r.byRouter ? 'cancelled' : 'error',
    stream: r.streamed ? 'upstream_error' : null,
    duration: true,
    failure: ANSWERED,
    ...(r.timedOut ? { log: { level: 'warn', msg: 'worker went silent mid-response; cut after the request timeout', fields: {} } } : {}),
  }),
  cancelled: (r) => ({
    verdict: 'release',
    booking: 'cancelled',
    stream: r.streamed ? 'client_disconnect' : null,
    duration: false,
    failure: ANSWERED,
  }),
  // The head came, then a broken framing or a close before any body byte: nothing reached the client.
  // A header node refused to send is the router's problem: no verdict, no retry.
  failed: (r, status) =>
    classifyUpstreamError(r.error) === 'router'
      ? {
          verdict: 'release',
          booking: null,
          stream: null,
          duration: false,
          failure: { error: ApiErrors.internal(), cause: 'internal', retryable: false },
          log: { level: 'error', msg: 'router error relaying a response', fields: { error: r.error.message } },
        }
      : {
          verdict: 'failure',
          booking: 'error',
          stream: null,
          duration: false,
          failure: fail(ApiErrors.upstreamIncomplete(), 'broken_response'),
          log: {
            level: 'warn',
            msg: 'worker broke its response before the first byte reached the client',
            fields: { status, error: r.error.message },
          },
        },
};

function fail(error: ApiError, cause: string): AttemptFailure {
  return { error, cause, retryable: true };
}

function messageOf(err: unknown): string {
  return (err as Error)?.message ?? String(err);
}

/** The router's answer when a worker's failure status is the last word. */
function statusError(status: number): ApiError {
  if (status === 429 || status === 503) return ApiErrors.upstreamOverloaded(status);
  if (status === 504) return ApiErrors.upstreamTimeout();
  return ApiErrors.upstreamError(status);
}
