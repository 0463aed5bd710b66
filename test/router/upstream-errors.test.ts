import { describe, expect, it } from 'vitest';
import { errors } from 'undici';
import { classifyUpstreamError } from '../../src/router/proxy/upstream-error.js';
import { endToEndHeaders, upstreamRequestHeaders } from '../../src/router/proxy/hop-by-hop.js';

const sys = (code: string) => Object.assign(new Error(code), { code });

describe('whose failure is it', () => {
  it.each([
    ['connection refused', sys('ECONNREFUSED'), 'unreachable'],
    ['connection reset', sys('ECONNRESET'), 'unreachable'],
    ['DNS', sys('EAI_AGAIN'), 'unreachable'],
    ['socket closed mid-request', new errors.SocketError('other side closed'), 'unreachable'],
    ['connect timeout', new errors.ConnectTimeoutError(), 'unreachable'],
    ['malformed response', new errors.HTTPParserError('bad', 'HPE_INVALID_CONSTANT'), 'unreachable'],
    ['malformed response, no code', new errors.HTTPParserError('bad'), 'unreachable'],
    ['response length lies', new errors.ResponseContentLengthMismatchError(), 'unreachable'],
    ['huge headers', new errors.HeadersOverflowError(), 'unreachable'],
    ['headers timeout', new errors.HeadersTimeoutError(), 'timeout'],
    ['body timeout', new errors.BodyTimeoutError(), 'timeout'],
    ['expect header (issue 11.2)', new errors.NotSupportedError('expect header not supported'), 'router'],
    ['invalid header', new errors.InvalidArgumentError('invalid transfer-encoding header'), 'router'],
    ['request length mismatch', new errors.RequestContentLengthMismatchError(), 'router'],
    ['pool closed by the router', new errors.ClientClosedError(), 'router'],
    ['pool destroyed by the router', new errors.ClientDestroyedError(), 'router'],
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
