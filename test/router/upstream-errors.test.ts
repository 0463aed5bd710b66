import { describe, expect, it } from 'vitest';
import { classifyUpstreamError } from '../../src/router/proxy/upstream-error.js';
import { UpstreamFailure } from '../../src/router/upstream/upstream-failure.js';
import { endToEndHeaders, upstreamRequestHeaders } from '../../src/router/proxy/hop-by-hop.js';

const sys = (code: string) => Object.assign(new Error(code), { code });

describe('whose failure is it', () => {
  it.each([
    ['connection refused', sys('ECONNREFUSED'), 'unreachable'],
    ['connection reset', sys('ECONNRESET'), 'unreachable'],
    ['DNS', sys('EAI_AGAIN'), 'unreachable'],
    ['closed mid-response', new UpstreamFailure('UPSTREAM_CLOSED', 'x'), 'unreachable'],
    ['connect timeout', new UpstreamFailure('UPSTREAM_CONNECT_TIMEOUT', 'x'), 'unreachable'],
    ['TLS handshake', new UpstreamFailure('UPSTREAM_TLS', 'x'), 'unreachable'],
    ['malformed response', new UpstreamFailure('UPSTREAM_MALFORMED', 'x'), 'unreachable'],
    ['headers timeout', new UpstreamFailure('UPSTREAM_HEADERS_TIMEOUT', 'x'), 'timeout'],
    ['body timeout', new UpstreamFailure('UPSTREAM_BODY_TIMEOUT', 'x'), 'timeout'],
    ['invalid header', new UpstreamFailure('UPSTREAM_INVALID_REQUEST', 'x'), 'router'],
    ['connections closed by the router', new UpstreamFailure('UPSTREAM_DESTROYED', 'x'), 'router'],
    ["node's own argument check", sys('ERR_INVALID_ARG_TYPE'), 'router'],
    ['a bug', new TypeError('x is not a function'), 'router'],
    ['not even an Error', 'boom', 'router'],
    ['nothing', undefined, 'router'],
  ])('%s → %s', (_n, err, expected) => {
    expect(classifyUpstreamError(err)).toBe(expected);
  });
});

describe('headers sent to a worker', () => {
  it('drop hop-by-hop headers, the Expect the router already answered, and reframe the body', () => {
    const h = upstreamRequestHeaders(
      {
        host: 'router:30000',
        connection: 'keep-alive, x-trace',
        'x-trace': 'hop',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        te: 'trailers',
        upgrade: 'h2c',
        expect: '100-continue',
        'content-length': '999',
        'content-type': 'application/json; charset=utf-8',
        authorization: 'Bearer k',
        'x-request-id': 'abc',
      },
      1234,
    );
    expect(h).toEqual({ authorization: 'Bearer k', 'x-request-id': 'abc', 'content-type': 'application/json', 'content-length': '1234' });
  });

  it('responses keep their own end-to-end headers (Expect is a request header only)', () => {
    expect(endToEndHeaders({ 'content-type': 'text/event-stream', connection: 'close', 'x-engine': '1' })).toEqual({
      'content-type': 'text/event-stream',
      'x-engine': '1',
    });
  });

  it.each([
    [
      'a framed body keeps its length',
      { 'content-type': 'application/json', 'content-length': '42' },
      { 'content-type': 'application/json', 'content-length': '42' },
    ],
    ['a chunked body loses both (node chunks it again)', { 'content-length': '42', 'transfer-encoding': 'chunked' }, {}],
    ['names in Connection go', { connection: 'keep-alive, x-hop', 'x-hop': '1', 'x-end': '2' }, { 'x-end': '2' }],
    ['a plain Connection names nothing', { connection: 'Keep-Alive', 'keep-alive': 'timeout=5', 'x-end': '2' }, { 'x-end': '2' }],
  ])('response headers: %s', (_n, given, expected) => {
    expect(endToEndHeaders(given)).toEqual(expected);
  });
});
