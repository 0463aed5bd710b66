import { describe, expect, it } from 'vitest';
import { isFailureStatus, settle } from '../../src/router/proxy/settlement.js';
import type { AttemptEnd } from '../../src/router/proxy/settlement.js';
import { UpstreamFailure } from '../../src/router/upstream/upstream-failure.js';

/**
 * Each way one attempt ends, and what it means
 * (docs/retries-and-breaker.md §Outcomes of one attempt): the breaker's verdict, the
 * worker's booking, a stream's, and what the client gets if it is the last attempt
 * (its status and error code), retried or not.
 */
type Row = [
  name: string,
  end: AttemptEnd,
  stream: boolean,
  want: {
    verdict: string;
    booking: string | null;
    stream?: string | null;
    answered?: true;
    status?: number;
    code?: string;
    retryable?: boolean;
    cause?: string;
  },
];

const relay = (status: number, relayed: Extract<AttemptEnd, { at: 'relay' }>['relayed']): AttemptEnd => ({ at: 'relay', status, relayed });
const cut = { kind: 'cut', streamed: true, firstByteAt: 1, timedOut: false, byRouter: false } as const;

const ROWS: Row[] = [
  [
    'a response completed (200)',
    relay(200, { kind: 'completed', streamed: false, firstByteAt: 1 }),
    false,
    { verdict: 'success', booking: 'success', stream: null, answered: true },
  ],
  [
    'a stream completed',
    relay(200, { kind: 'completed', streamed: true, firstByteAt: 1 }),
    true,
    { verdict: 'success', booking: 'success', stream: 'ok', answered: true },
  ],
  [
    'a 4xx relayed',
    relay(400, { kind: 'completed', streamed: false, firstByteAt: 1 }),
    false,
    { verdict: 'success', booking: 'client_error', answered: true },
  ],
  [
    'a stream cut by the worker after bytes',
    relay(200, cut),
    true,
    { verdict: 'failure', booking: 'error', stream: 'upstream_error', answered: true },
  ],
  [
    'a stream cut by the router itself',
    relay(200, { ...cut, byRouter: true }),
    true,
    { verdict: 'release', booking: 'cancelled', stream: 'upstream_error', answered: true },
  ],
  [
    'the client left mid-stream',
    relay(200, { kind: 'cancelled', streamed: true }),
    true,
    { verdict: 'release', booking: 'cancelled', stream: 'client_disconnect', answered: true },
  ],
  [
    'a broken framing before the first body byte',
    relay(200, { kind: 'failed', streamed: false, error: new UpstreamFailure('UPSTREAM_MALFORMED', 'x') }),
    false,
    { verdict: 'failure', booking: 'error', status: 502, code: 'upstream_body_incomplete', retryable: true, cause: 'broken_response' },
  ],
  [
    'a header node refused, before the first body byte',
    relay(200, { kind: 'failed', streamed: false, error: Object.assign(new TypeError('bad header'), { code: 'ERR_INVALID_CHAR' }) }),
    false,
    { verdict: 'release', booking: null, status: 500, code: 'internal_error', retryable: false, cause: 'internal' },
  ],
  [
    '429',
    { at: 'status', status: 429 },
    false,
    { verdict: 'backpressure', booking: 'backpressure', status: 503, code: 'upstream_overloaded', retryable: true, cause: 'status_429' },
  ],
  [
    '503',
    { at: 'status', status: 503 },
    false,
    { verdict: 'backpressure', booking: 'backpressure', status: 503, code: 'upstream_overloaded', retryable: true, cause: 'status_503' },
  ],
  [
    '504',
    { at: 'status', status: 504 },
    false,
    { verdict: 'failure', booking: 'error', status: 504, code: 'upstream_timeout', retryable: true, cause: 'status_504' },
  ],
  [
    'another 5xx',
    { at: 'status', status: 500 },
    false,
    { verdict: 'failure', booking: 'error', status: 502, code: 'upstream_error', retryable: true, cause: 'status_500' },
  ],
  [
    'refused or reset',
    { at: 'send', sent: { kind: 'unreachable', code: 'ECONNREFUSED', detail: 'x' }, workerRemoved: false },
    false,
    { verdict: 'failure', booking: 'error', status: 502, code: 'upstream_unreachable', retryable: true, cause: 'connect' },
  ],
  [
    'a malformed head (an unasked 101)',
    { at: 'send', sent: { kind: 'unreachable', code: 'UPSTREAM_MALFORMED', detail: 'x' }, workerRemoved: false },
    false,
    { verdict: 'failure', booking: 'error', status: 502, code: 'upstream_unreachable', retryable: true, cause: 'malformed' },
  ],
  [
    'no head within the timeout',
    { at: 'send', sent: { kind: 'timeout' }, workerRemoved: false },
    false,
    { verdict: 'failure', booking: 'error', status: 504, code: 'upstream_timeout', retryable: false },
  ],
  [
    'the client left before the head',
    { at: 'send', sent: { kind: 'cancelled' }, workerRemoved: false },
    true,
    { verdict: 'release', booking: 'cancelled', stream: 'client_disconnect', answered: true },
  ],
  [
    'the router could not send',
    { at: 'send', sent: { kind: 'router_error', error: new Error('x') }, workerRemoved: false },
    false,
    { verdict: 'release', booking: null, status: 500, code: 'internal_error', retryable: false },
  ],
  [
    'the worker left the fleet under it',
    { at: 'send', sent: { kind: 'router_error', error: new Error('x') }, workerRemoved: true },
    false,
    { verdict: 'release', booking: null, status: 502, code: 'upstream_unreachable', retryable: true, cause: 'worker_removed' },
  ],
];

describe("settle: one attempt's end, as the outcomes table has it", () => {
  it.each(ROWS)('%s', (_name, end, stream, want) => {
    const s = settle(end, stream);
    expect(s.verdict).toBe(want.verdict);
    expect(s.booking).toBe(want.booking);
    if (want.stream !== undefined) expect(s.stream).toBe(want.stream);
    if (want.answered) return void expect(s.failure).toBeUndefined();
    expect(s.failure).toBeDefined();
    expect(s.failure!.error.status).toBe(want.status);
    expect(s.failure!.error.code).toBe(want.code);
    expect(s.failure!.retryable).toBe(want.retryable);
    if (want.cause !== undefined) expect(s.failure!.cause).toBe(want.cause);
  });
});

describe('settle: which answers give a TTFT', () => {
  // Only a streamed 200 that completed times its first byte: a cut stream, a 4xx stream or a plain answer do not.
  it.each([
    ['a streamed 200 completed', relay(200, { kind: 'completed', streamed: true, firstByteAt: 7 }), 7],
    ['a plain 200 completed', relay(200, { kind: 'completed', streamed: false, firstByteAt: 7 }), undefined],
    ['a streamed 400 completed', relay(400, { kind: 'completed', streamed: true, firstByteAt: 7 }), undefined],
    ['a stream cut after bytes', relay(200, { ...cut, firstByteAt: 7 }), undefined],
    ['a failure status read away', { at: 'status', status: 503 } as AttemptEnd, undefined],
  ])('%s', (_name, end, want) => {
    expect(settle(end, true).ttftAt).toBe(want);
  });
});

describe('isFailureStatus: what is read away rather than relayed', () => {
  it.each([
    [200, false],
    [404, false],
    [428, false],
    [429, true],
    [499, false],
    [500, true],
    [503, true],
    [599, true],
  ])('%i → %s', (status, want) => {
    expect(isFailureStatus(status)).toBe(want);
  });
});
