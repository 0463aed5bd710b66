import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Publisher } from 'zeromq';
import { sequenceFrame, ZmtpSubscription } from '../../src/engines/index.js';
import type { PushFrame } from '../../src/engines/index.js';
import { eventually } from '../helpers/http.js';
import { publisherHandshake } from '../helpers/zmtp-publisher.js';

/**
 * The load channel's own ZMTP subscriber against libzmq publishers (zeromq's, as the
 * simulator's and pyzmq's are) and against hand-written byte streams
 * (docs/engine-load.md §Load by push).
 */
const closers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const c of closers.splice(0)) c.close();
});

/** A publisher bound to `endpoint`; a port just closed is freed once libzmq gets to it, so binding is retried a while. */
async function publisher(endpoint = 'tcp://127.0.0.1:*'): Promise<{ pub: Publisher; endpoint: string }> {
  return eventually(async () => {
    const pub = new Publisher({ linger: 0 });
    closers.push(pub);
    try {
      await pub.bind(endpoint);
    } catch {
      pub.close();
      return undefined;
    }
    return { pub, endpoint: pub.lastEndpoint! };
  }, 3000);
}

function subscribe(endpoint: string, topic = 'load'): { sub: ZmtpSubscription; frames: PushFrame[]; malformed: string[] } {
  const frames: PushFrame[] = [];
  const malformed: string[] = [];
  const sub = new ZmtpSubscription(
    endpoint,
    topic,
    (payload, seq, topic) => frames.push({ topic, seq, payload }),
    (e) => malformed.push(e.message),
  );
  closers.push(sub);
  return { sub, frames, malformed };
}

/** Publish until the subscriber has what it needs: a PUB drops what it sends before the subscription reaches it. */
async function publishUntil(pub: Publisher, frames: () => Buffer[], done: () => boolean): Promise<void> {
  await eventually(async () => {
    await pub.send(frames());
    await new Promise((r) => setTimeout(r, 20));
    return done();
  }, 5000);
}

describe('ZmtpSubscription', () => {
  it('receives the envelope from a libzmq publisher, with its own copy of the payload; other topics are not delivered', async () => {
    const { pub, endpoint } = await publisher();
    const { frames } = subscribe(endpoint);
    let seq = 0;
    await publishUntil(
      pub,
      () => [Buffer.from('load'), sequenceFrame(seq++), Buffer.from([0x93, 1, 2, 3])],
      () => frames.length >= 2,
    );
    await pub.send([Buffer.from('kv'), sequenceFrame(0), Buffer.from([0xc0])]);
    await pub.send([Buffer.from('load'), sequenceFrame(seq), Buffer.from([0xc0])]);
    await eventually(async () => frames.at(-1)?.seq === seq, 2000);
    expect(frames.every((f) => f.topic === 'load')).toBe(true);
    expect(frames.slice(1).every((f, i) => f.seq === frames[i]!.seq + 1)).toBe(true);
    expect([...frames[0]!.payload]).toEqual([0x93, 1, 2, 3]);
    expect([...frames.at(-1)!.payload]).toEqual([0xc0]);
  });

  it('reports a message that is not the envelope and goes on', async () => {
    const { pub, endpoint } = await publisher();
    const { sub, frames, malformed } = subscribe(endpoint);
    await publishUntil(
      pub,
      () => [Buffer.from('load'), Buffer.from([1, 2])],
      () => malformed.length > 0,
    );
    expect(malformed[0]).toMatch(/frames/);
    await publishUntil(
      pub,
      () => [Buffer.from('load'), sequenceFrame(7), Buffer.from([0xc0])],
      () => frames.length > 0,
    );
    expect(frames[0]!.seq).toBe(7);
    expect(sub.malformed).toBe(malformed.length);
    expect(sub.received).toBeGreaterThan(sub.malformed);
  });

  it('joins a publisher that comes up later, and again after it restarts on the same port', async () => {
    const probe = await publisher();
    const endpoint = probe.endpoint;
    probe.pub.close();
    await new Promise((r) => setTimeout(r, 50));
    const { frames } = subscribe(endpoint);
    await new Promise((r) => setTimeout(r, 700)); // refused at least once
    const first = await publisher(endpoint);
    await publishUntil(
      first.pub,
      () => [Buffer.from('load'), sequenceFrame(5), Buffer.from([0xc0])],
      () => frames.length > 0,
    );
    first.pub.close();
    const second = await publisher(endpoint);
    await publishUntil(
      second.pub,
      () => [Buffer.from('load'), sequenceFrame(0), Buffer.from([0xc0])],
      () => frames.some((f) => f.seq === 0),
    );
  });

  it('delivers nothing once closed', async () => {
    const { pub, endpoint } = await publisher();
    const { sub, frames } = subscribe(endpoint);
    await publishUntil(
      pub,
      () => [Buffer.from('load'), sequenceFrame(1), Buffer.from([0xc0])],
      () => frames.length > 0,
    );
    sub.close();
    const count = frames.length;
    for (let i = 0; i < 5; i++) await pub.send([Buffer.from('load'), sequenceFrame(2 + i), Buffer.from([0xc0])]);
    await new Promise((r) => setTimeout(r, 100));
    expect(frames).toHaveLength(count);
  });
});

/** A publisher written by hand: the greeting, READY, then whatever `bytes` gives, written in pieces of `piece` bytes. */
async function handPublisher(bytes: (socket: Socket) => Buffer, piece: number): Promise<{ server: Server; endpoint: string }> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    const all = Buffer.concat([publisherHandshake(1), bytes(socket)]);
    let at = 0;
    const next = (): void => {
      if (at >= all.length || socket.destroyed) return;
      socket.write(all.subarray(at, at + piece));
      at += piece;
      setTimeout(next, 1);
    };
    next();
  });
  closers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, endpoint: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const shortFrame = (more: boolean, body: Buffer): Buffer => Buffer.concat([Buffer.from([more ? 1 : 0, body.length]), body]);
const longFrame = (more: boolean, body: Buffer): Buffer => {
  const head = Buffer.alloc(9);
  head[0] = more ? 3 : 2;
  head.writeBigUInt64BE(BigInt(body.length), 1);
  return Buffer.concat([head, body]);
};

describe('ZmtpSubscription on a byte stream', () => {
  it('puts together messages whose frames arrive a byte at a time, in the short and the long form', async () => {
    const payload = Buffer.alloc(300, 7);
    const { endpoint } = await handPublisher(
      () =>
        Buffer.concat([
          shortFrame(true, Buffer.from('load')),
          shortFrame(true, sequenceFrame(3)),
          shortFrame(false, Buffer.from([0xc0])),
          shortFrame(true, Buffer.from('load')),
          shortFrame(true, sequenceFrame(4)),
          longFrame(false, payload),
        ]),
      1,
    );
    const { frames } = subscribe(endpoint);
    await eventually(async () => frames.length === 2, 5000);
    expect(frames.map((f) => f.seq)).toEqual([3, 4]);
    expect([...frames[0]!.payload]).toEqual([0xc0]);
    expect(Buffer.compare(frames[1]!.payload, payload)).toBe(0);
  });

  it('drops a peer that does not speak ZMTP, or sends a frame past the cap, and says why', async () => {
    const http = createServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    closers.push(http);
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const notZmtp = subscribe(`tcp://127.0.0.1:${(http.address() as AddressInfo).port}`);
    await eventually(async () => notZmtp.sub.protocolErrors > 0, 3000);
    expect(notZmtp.sub.lastProtocolError).toMatch(/not a ZMTP peer/);

    const huge = Buffer.alloc(9);
    huge[0] = 2;
    huge.writeBigUInt64BE(1n << 40n, 1);
    const { endpoint } = await handPublisher(() => huge, 64);
    const capped = subscribe(endpoint);
    await eventually(async () => capped.sub.protocolErrors > 0, 3000);
    expect(capped.sub.lastProtocolError).toMatch(/a frame of/);
    expect(capped.frames).toHaveLength(0);
  });
});

describe('ZmtpSubscription reading the envelope in place', () => {
  const seq8 = (hi: number, lo: number): Buffer => {
    const b = Buffer.alloc(8);
    b.writeUInt32BE(hi, 0);
    b.writeUInt32BE(lo, 4);
    return b;
  };
  const message = (...frames: Buffer[]): Buffer => Buffer.concat(frames.map((f, i) => shortFrame(i < frames.length - 1, f)));
  const good = (seq: number): Buffer => message(Buffer.from('load'), sequenceFrame(seq), Buffer.from([0xc0]));

  it.each([
    ['two frames', message(Buffer.from('load'), sequenceFrame(1)), /a message of 2 frames/],
    ['four frames', message(Buffer.from('load'), sequenceFrame(1), Buffer.from([0xc0]), Buffer.from([0xc0])), /a message of 4 frames/],
    ['one frame', message(Buffer.from('load')), /a message of 1 frames/],
    ['a 4-byte sequence', message(Buffer.from('load'), Buffer.from([0, 0, 0, 1]), Buffer.from([0xc0])), /a 4-byte sequence frame/],
    ['a sequence past 2^53', message(Buffer.from('load'), seq8(0x200000, 0), Buffer.from([0xc0])), /beyond 2\^53/],
  ])('reports %s as readPushFrame words it, and reads the next message', async (_name, bad, why) => {
    const { endpoint } = await handPublisher(() => Buffer.concat([bad, good(9)]), 4096);
    const { sub, frames, malformed } = subscribe(endpoint);
    await eventually(async () => frames.length === 1, 3000);
    expect(malformed).toHaveLength(1);
    expect(malformed[0]).toMatch(why);
    expect(frames[0]!.seq).toBe(9);
    expect(sub).toMatchObject({ received: 2, malformed: 1, protocolErrors: 0 });
  });

  it('reads the sequence from both words, up to 2^53 - 1', async () => {
    const { endpoint } = await handPublisher(
      () =>
        Buffer.concat([
          message(Buffer.from('load'), seq8(0x1fffff, 0xffffffff), Buffer.from([0xc0])),
          message(Buffer.from('load'), seq8(1, 2), Buffer.from([0xc0])),
        ]),
      4096,
    );
    const { frames } = subscribe(endpoint);
    await eventually(async () => frames.length === 2, 3000);
    expect(frames.map((f) => f.seq)).toEqual([Number.MAX_SAFE_INTEGER, 0x1_0000_0002]);
  });

  it('hands an unchanged payload on as the same buffer, and a changed one as a new copy', async () => {
    const stat = (waiting: number): Buffer => Buffer.from([0x93, 0xa1, 0x4c, waiting]);
    const { endpoint } = await handPublisher(
      () => Buffer.concat([1, 1, 2, 2, 1].map((waiting, i) => message(Buffer.from('load'), sequenceFrame(i), stat(waiting)))),
      7,
    );
    const { frames } = subscribe(endpoint);
    await eventually(async () => frames.length === 5, 3000);
    const [a, b, c, d, e] = frames.map((f) => f.payload) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    expect(b).toBe(a);
    expect(c).not.toBe(b);
    expect(d).toBe(c);
    expect(e).not.toBe(a);
    expect([a, c, e].map((p) => p[3])).toEqual([1, 2, 1]);
  });

  it.each([
    // [subscribed, published, delivered as]
    ['load', 'load', 'load'],
    ['load', 'load.rank1', 'load.rank1'],
    ['load', 'lo', null],
    ['load', 'kv', null],
    ['', 'anything', 'anything'],
    ['lö', 'lö-ad', 'lö-ad'],
  ])('subscribed to %j, a message on %j is delivered as %j: the topic is compared by its bytes', async (topic, published, delivered) => {
    const { endpoint } = await handPublisher(
      () =>
        Buffer.concat([
          message(Buffer.from(published), sequenceFrame(1), Buffer.from([0xc0])),
          message(Buffer.from(topic === '' ? 'x' : topic), sequenceFrame(2), Buffer.from([0xc0])),
        ]),
      4096,
    );
    const { frames, malformed } = subscribe(endpoint, topic);
    // The second message is on the subscribed topic itself: once it is in, the first was delivered or dropped.
    await eventually(async () => frames.some((f) => f.seq === 2), 3000);
    expect(frames.filter((f) => f.seq === 1).map((f) => f.topic)).toEqual(delivered === null ? [] : [delivered]);
    expect(malformed).toEqual([]);
  });
});
