/**
 * The HTTP/1.1 response reader of the router's own clients (src/net/response-parser.ts)
 * over exact bytes: each framing RFC 9112 section 6.3 names, informational answers, the
 * keep-alive rules, and every way bytes fail to be a response. Every case is read
 * whole and again split at every byte: where the packets break never changes what is read.
 */
import { describe, expect, it } from 'vitest';
import { ResponseParser } from '../../src/net/index.js';
import type { ParseStep, ResponseSink } from '../../src/net/index.js';

interface Read {
  step: ParseStep;
  heads: number[];
  status: number;
  headers: Record<string, string | string[]> | undefined;
  body: string;
  keepAlive: boolean;
  hintMs: number;
  trailing: boolean;
}

/** Feed `pieces` in order; `close` ends the connection after them. */
function read(pieces: Buffer[], close = false): Read {
  const p = new ResponseParser(true);
  const heads: number[] = [];
  const body: Buffer[] = [];
  let headers: Record<string, string | string[]> | undefined;
  const sink: ResponseSink = {
    head(parser) {
      heads.push(parser.status);
      if (parser.status >= 200) headers = parser.headers;
      return true;
    },
    body(chunk) {
      body.push(Buffer.from(chunk));
      return true;
    },
  };
  let step: ParseStep = 'more';
  let trailing = false;
  for (let i = 0; i < pieces.length; i++) {
    step = p.feed(pieces[i]!, sink);
    if (step === 'more') continue;
    // Bytes in a later piece follow the answer as surely as bytes in its last one.
    trailing = p.trailing || pieces.slice(i + 1).some((b) => b.length > 0);
    break;
  }
  if (step === 'more' && close) step = p.closed() ? 'done' : 'more';
  return {
    step,
    heads,
    status: p.status,
    headers,
    body: Buffer.concat(body).toString('latin1'),
    keepAlive: p.keepAlive,
    hintMs: p.keepAliveHintMs,
    trailing,
  };
}

const whole = (text: string): Buffer[] => [Buffer.from(text, 'latin1')];
/** The same bytes in two pieces split at `at`. */
const split = (text: string, at: number): Buffer[] => [Buffer.from(text.slice(0, at), 'latin1'), Buffer.from(text.slice(at), 'latin1')];

const CASES: Array<{
  name: string;
  bytes: string;
  close?: boolean;
  expect: Partial<Omit<Read, 'headers'>> & { headers?: Record<string, string | string[]> };
}> = [
  {
    name: 'Content-Length',
    bytes: 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}',
    expect: {
      step: 'done',
      status: 200,
      body: '{"ok":true}',
      keepAlive: true,
      headers: { 'content-type': 'application/json', 'content-length': '11' },
    },
  },
  {
    name: 'chunked, with extensions and trailers',
    bytes: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nx-trailer: t\r\n\r\n',
    expect: { step: 'done', body: 'hello, world', keepAlive: true },
  },
  {
    name: 'a chunk size with leading zeros',
    bytes: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0000000003\r\nabc\r\n00\r\n\r\n',
    expect: { step: 'done', body: 'abc' },
  },
  {
    name: 'chunked with no trailers',
    bytes: 'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n',
    expect: { step: 'done', body: '0123456789', keepAlive: true },
  },
  {
    name: '204 has no body',
    bytes: 'HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n',
    expect: { step: 'done', body: '', keepAlive: true },
  },
  { name: '304 has no body', bytes: 'HTTP/1.1 304 Not Modified\r\n\r\n', expect: { step: 'done', body: '' } },
  {
    name: 'informational answers before the real one',
    bytes:
      'HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok',
    expect: { step: 'done', heads: [103, 102, 201], status: 201, body: 'ok', headers: { 'content-length': '2' } },
  },
  {
    name: 'no framing: the body runs until close',
    bytes: 'HTTP/1.1 200 OK\r\n\r\nuntil the end',
    close: true,
    expect: { step: 'done', body: 'until the end', keepAlive: false },
  },
  {
    name: 'a coding other than chunked last: until close',
    bytes: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, gzip\r\n\r\nzz',
    close: true,
    expect: { step: 'done', body: 'zz', keepAlive: false },
  },
  {
    name: 'Transfer-Encoding beats Content-Length, and the connection goes',
    bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 99\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    expect: { step: 'done', body: 'abc', keepAlive: false },
  },
  {
    name: 'HTTP/1.0 closes by default',
    bytes: 'HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nx',
    expect: { step: 'done', keepAlive: false },
  },
  {
    name: 'HTTP/1.0 with keep-alive',
    bytes: 'HTTP/1.0 200 OK\r\nconnection: Keep-Alive\r\ncontent-length: 1\r\n\r\nx',
    expect: { step: 'done', keepAlive: true },
  },
  { name: 'Connection: close', bytes: 'HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\nx', expect: { keepAlive: false } },
  {
    name: "the server's keep-alive timeout",
    bytes: 'HTTP/1.1 200 OK\r\nkeep-alive: timeout=5, max=100\r\ncontent-length: 0\r\n\r\n',
    expect: { step: 'done', hintMs: 5000, keepAlive: true },
  },
  {
    name: 'a repeated header is an array; a status line without a reason',
    bytes: 'HTTP/1.1 200\r\nset-cookie: a=1\r\nset-cookie: b=2\r\nset-cookie: c=3\r\ncontent-length: 0\r\n\r\n',
    expect: { step: 'done', status: 200, headers: { 'set-cookie': ['a=1', 'b=2', 'c=3'], 'content-length': '0' } },
  },
  {
    name: 'a Content-Length list of one value',
    bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 2, 2\r\ncontent-length: 2\r\n\r\nhi',
    // Relayed as one length: as it came it would be two header lines to the client.
    expect: { step: 'done', body: 'hi', headers: { 'content-length': '2' } },
  },
  {
    name: 'bytes after the answer',
    bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nxHTTP',
    expect: { step: 'done', body: 'x', trailing: true },
  },
  // Not responses.
  { name: 'not HTTP', bytes: 'SSH-2.0-OpenSSH_9.6\r\n\r\n', expect: { step: 'a reply that is not HTTP/1.x' } },
  { name: 'HTTP/2 preface', bytes: 'HTTP/2 200\r\n\r\n', expect: { step: 'a reply that is not HTTP/1.x' } },
  { name: 'a bad Content-Length', bytes: 'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', expect: { step: "a Content-Length of '-1'" } },
  {
    name: 'two different Content-Lengths',
    bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nxx',
    expect: { step: 'two different Content-Lengths' },
  },
  { name: 'obsolete line folding', bytes: 'HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\n\r\n', expect: { step: "a header line ' folded'" } },
  {
    name: 'a control character in a value',
    bytes: 'HTTP/1.1 200 OK\r\nx-a: one\x00two\r\n\r\n',
    expect: { step: "a control character in the value of 'x-a'" },
  },
  { name: 'space before the colon', bytes: 'HTTP/1.1 200 OK\r\nx-a : 1\r\n\r\n', expect: { step: "a header name 'x-a '" } },
  {
    name: 'a chunk size that is not hex',
    bytes: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
    expect: { step: "a chunk size of 'zz'" },
  },
  {
    name: 'a chunk longer than its size',
    bytes: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n',
    expect: { step: 'a chunk not followed by CRLF' },
  },
  {
    name: 'a chunk size line ended by a bare LF',
    bytes: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\nab\r\n',
    expect: { step: 'a chunk size line not ended by CRLF' },
  },
];

describe('ResponseParser', () => {
  it.each(CASES)('$name', ({ bytes, close, expect: want }) => {
    const got = read(whole(bytes), close);
    expect(got).toMatchObject(want);
    // Split at every byte, the same answer: framing never depends on packet boundaries.
    for (let at = 1; at < bytes.length; at++) expect(read(split(bytes, at), close), `split at ${at}`).toMatchObject(want);
  });

  it('a head longer than 64 KB is refused before its end arrives', () => {
    const got = read(whole(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70_000)}`));
    expect(got.step).toBe('a status line and headers longer than 64 KB');
  });

  it('an answer cut before its length is not complete at close', () => {
    const got = read(whole('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'), true);
    expect(got.step).toBe('more');
    expect(got.body).toBe('abc');
  });

  it('without collecting, it reads the framing and keeps no headers', () => {
    const p = new ResponseParser(false);
    const body: string[] = [];
    const step = p.feed(Buffer.from('HTTP/1.1 200 OK\r\nx-a: 1\r\ncontent-length: 2\r\n\r\nok'), {
      head: () => true,
      body: (c) => (body.push(c.toString()), true),
    });
    expect([step, p.headers, p.contentLength, body]).toEqual(['done', undefined, 2, ['ok']]);
  });

  it('a sink that says stop stops the read there', () => {
    const p = new ResponseParser(true);
    let bodies = 0;
    const step = p.feed(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nabcd'), {
      head: () => false,
      body: () => (bodies++, true),
    });
    expect([step, bodies]).toEqual(['stopped', 0]);
  });

  it('reset() forgets the last answer, and the parser reads the next one', () => {
    const p = new ResponseParser(true);
    const sink: ResponseSink = { head: () => true, body: () => true };
    expect(p.feed(Buffer.from('HTTP/1.1 500 Oops\r\nx-a: 1\r\ncontent-length: 0\r\n\r\n'), sink)).toBe('done');
    p.reset();
    expect([p.status, p.headers, p.started]).toEqual([0, undefined, false]);
    expect(p.feed(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'), sink)).toBe('done');
    expect(p.status).toBe(200);
  });
});
