import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { parseZmqEndpoint } from './kv-events-rule.js';
import { PushDecodeError } from './kv-events.js';
import { readPushFrameOr } from './push-frame.js';

/**
 * A message as the subscription hands it on: the envelope's three frames as
 * arguments, not as an object, since a router takes thousands a second and keeps
 * none of them (docs/engine-load.md §Load by push).
 */
export type ZmtpMessageHandler = (payload: Buffer, seq: number, topic: string) => void;

/** Reconnect this long after a publisher went away or was not up yet (as PushSubscription's ZMQ socket does). */
const RECONNECT_MS = 500;
/** The largest message taken: a LoadStat is some 40 bytes; anything near this is not one, and the connection is dropped. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** The most frames a message may have: the envelope has three. */
const MAX_FRAMES = 16;

/**
 * Our greeting (ZMTP 3.0, RFC 23): signature, version 3.0, the NULL mechanism, not
 * the server, then our READY command naming us a SUB. Announcing 3.0 rather than 3.1
 * makes the publisher take subscriptions as messages (a first byte of 1, then the
 * topic), which every libzmq since 4.0 does.
 */
function greeting(): Buffer {
  const g = Buffer.alloc(64);
  g[0] = 0xff;
  g[8] = 0x01;
  g[9] = 0x7f;
  g[10] = 3;
  g[11] = 0;
  g.write('NULL', 12, 'latin1');
  return g;
}

function readyCommand(): Buffer {
  const name = Buffer.from('Socket-Type', 'latin1');
  const value = Buffer.from('SUB', 'latin1');
  const body = Buffer.alloc(1 + 5 + 1 + name.length + 4 + value.length);
  let at = body.writeUInt8(5, 0);
  at += body.write('READY', at, 'latin1');
  at = body.writeUInt8(name.length, at);
  at += name.copy(body, at);
  at = body.writeUInt32BE(value.length, at);
  value.copy(body, at);
  return Buffer.concat([Buffer.from([0x04, body.length]), body]);
}

function subscribeMessage(topic: string): Buffer {
  const body = Buffer.concat([Buffer.from([1]), Buffer.from(topic, 'utf8')]);
  // One short frame: flags 0 (last, not a command), then its size. A topic past 254 bytes needs the long form.
  if (body.length <= 255) return Buffer.concat([Buffer.from([0x00, body.length]), body]);
  const head = Buffer.alloc(9);
  head[0] = 0x02;
  head.writeBigUInt64BE(BigInt(body.length), 1);
  return Buffer.concat([head, body]);
}

const GREETING = greeting();
const READY = readyCommand();
/**
 * Where every subscription's reads land: reads are handled one at a time on the event
 * loop, each parsed before the next, so one buffer serves them all, and no chunk is
 * allocated per read. What outlives a read is copied out of it.
 */
const READ_BUFFER = Buffer.alloc(64 * 1024);
/**
 * Where the message being parsed has its frames, as [start, length] pairs in the data
 * parsed: shared for the same reason, a parse never being interrupted by another.
 */
const FRAMES = new Int32Array(2 * MAX_FRAMES);

interface Topic {
  readonly bytes: Buffer;
  readonly text: string;
}
const newTopic = (bytes: Buffer): Topic => ({ bytes, text: bytes.toString('utf8') });
/**
 * Topics by name, one object for every subscription to the same one: a router's
 * thousands of load subscriptions compare each message with the same bytes, which
 * stay in the cache, rather than each with its own. Engines name the topic, so only
 * the first few names are kept.
 */
const TOPICS = new Map<string, Topic>();
function sharedTopic(name: string): Topic {
  let t = TOPICS.get(name);
  if (t === undefined) {
    t = newTopic(Buffer.from(name, 'utf8'));
    if (TOPICS.size < 16) TOPICS.set(name, t);
  }
  return t;
}

/**
 * A SUB on one publisher over plain TCP, speaking ZMTP 3.0 itself (docs/engine-load.md
 * §Load by push): the same messages as PushSubscription's libzmq socket, for the load
 * channel, where a router holds one per worker rank and each brings a frame a second.
 * A libzmq socket hands every message from its I/O thread to the event loop through a
 * descriptor of its own and a poll that is armed and disarmed per message; at 4,096
 * ranks that hand-off was most of the idle router's CPU. Here a message is one read on
 * the event loop into a buffer all subscriptions share, and a connection is one
 * descriptor.
 *
 * As the libzmq socket does: it reconnects every 500 ms while the publisher is down or
 * after it went away, subscribes to `topic` (the publisher filters; frames of another
 * topic are dropped here too), and reports messages that are not the engines'
 * envelope, which are dropped. A stream that breaks ZMTP's framing is dropped and
 * joined again.
 */
export class ZmtpSubscription {
  #socket: Socket | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** Bytes read and not yet parsed (a copy: reads land in the shared buffer); null when none. */
  #pending: Buffer | null = null;
  #greeted = false;
  #ready = false;
  /** The topic subscribed to, shared with every subscription to it. */
  readonly #subscribed: Topic;
  /** The last message's topic when it was longer than the one subscribed to (the publisher filters by prefix). */
  #longer: Topic;
  /** The last message's payload, a copy handed on again while the bytes stay the same. */
  #payload: Buffer | undefined;
  readonly #host: string;
  readonly #port: number;
  /** Messages received, and ones that were not a push envelope. */
  received = 0;
  malformed = 0;
  /** A message that could not be read: counted and reported. */
  readonly #malformed = (err: PushDecodeError): void => {
    this.malformed++;
    this.onMalformed(err);
  };
  /** Connections dropped for a stream that broke ZMTP, and the last reason. */
  protocolErrors = 0;
  lastProtocolError: string | undefined;

  constructor(
    readonly endpoint: string,
    readonly topic: string,
    private readonly onMessage: ZmtpMessageHandler,
    private readonly onMalformed: (error: PushDecodeError) => void = () => undefined,
  ) {
    const parsed = parseZmqEndpoint(endpoint);
    if (typeof parsed === 'string') throw new Error(parsed);
    if (parsed.host === null) throw new Error(`'${endpoint}' names no host to connect to`);
    this.#host = parsed.host.startsWith('[') ? parsed.host.slice(1, -1) : parsed.host;
    this.#port = parsed.port;
    this.#subscribed = this.#longer = sharedTopic(topic);
    this.#connect();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#socket?.destroy();
    this.#socket = undefined;
  }

  #connect(): void {
    this.#timer = undefined;
    if (this.#closed) return;
    this.#pending = null;
    this.#greeted = false;
    this.#ready = false;
    const socket = connect({
      host: this.#host,
      port: this.#port,
      noDelay: true,
      onread: {
        buffer: READ_BUFFER,
        callback: (length) => {
          if (this.#socket !== socket) return false;
          const why = this.#read(READ_BUFFER, length);
          if (why !== null) {
            this.protocolErrors++;
            this.lastProtocolError = why;
            socket.destroy();
          }
          return true;
        },
      },
    });
    this.#socket = socket;
    socket.on('connect', () => {
      socket.write(GREETING);
      socket.write(READY);
      socket.write(subscribeMessage(this.topic));
    });
    // Refused, reset or ended: join again later, as ZMQ does.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.#socket !== socket || this.#closed) return;
      this.#socket = undefined;
      this.#timer = setTimeout(() => this.#connect(), RECONNECT_MS);
    });
  }

  /**
   * Parse what arrived; a reason when the stream is not ZMTP as a publisher speaks it,
   * else null. A message is handed on only once all its frames are in; the bytes of
   * one cut short by the read are kept and parsed again with the next. Frames are
   * noted as offsets into `data` (FRAMES), not as views: a heartbeat allocates nothing
   * on the way to the consumer.
   */
  #read(read: Buffer, readLength: number): string | null {
    const data = this.#pending === null ? read : Buffer.concat([this.#pending, read.subarray(0, readLength)]);
    const end = this.#pending === null ? readLength : data.length;
    this.#pending = null;
    let at = 0;
    if (!this.#greeted) {
      // The signature is known from its first byte: say so early rather than wait for 64 bytes that never come.
      if (data[0] !== 0xff || (end >= 10 && (data[9]! & 1) !== 1)) return 'not a ZMTP peer (no greeting signature)';
      if (end < 64) {
        this.#pending = Buffer.from(data.subarray(0, end));
        return null;
      }
      if (data[10]! < 3) return `a ZMTP ${data[10]}.x peer (3.0 or later is needed)`;
      if (data.toString('latin1', 12, 16) !== 'NULL')
        return `the ZMTP mechanism ${data.toString('latin1', 12, 32).replace(/\0+$/, '')} (only NULL is spoken)`;
      this.#greeted = true;
      at = 64;
    }
    let frames = 0;
    let messageStart = at;
    let messageBytes = 0;
    while (end - at >= 2) {
      const flags = data[at]!;
      let size: number;
      let head: number;
      if ((flags & 0x02) === 0) {
        size = data[at + 1]!;
        head = 2;
      } else {
        if (end - at < 9) break;
        size = Number(data.readBigUInt64BE(at + 1));
        head = 9;
      }
      if (size > MAX_MESSAGE_BYTES) return `a frame of ${size} bytes (at most ${MAX_MESSAGE_BYTES} are taken)`;
      if (end - at - head < size) break;
      const body = at + head;
      at = body + size;
      if ((flags & 0x04) !== 0) {
        const why = this.#command(data.subarray(body, at));
        if (why !== null) return why;
        messageStart = at;
        continue;
      }
      if (!this.#ready) return 'a message before the READY command';
      if (frames >= MAX_FRAMES || messageBytes + size > MAX_MESSAGE_BYTES) return 'a message of too many frames or bytes';
      FRAMES[2 * frames] = body;
      FRAMES[2 * frames + 1] = size;
      frames++;
      messageBytes += size;
      if ((flags & 0x01) === 0) {
        this.#message(data, frames);
        if (this.#closed) return null;
        frames = 0;
        messageBytes = 0;
        messageStart = at;
      }
    }
    if (messageStart < end) this.#pending = Buffer.from(data.subarray(messageStart, end));
    return null;
  }

  /** A command: the peer's READY (or ERROR); others (3.1's PING, should a publisher send one) are ignored. */
  #command(body: Buffer): string | null {
    const nameLength = body[0] ?? 0;
    const name = body.toString('latin1', 1, 1 + nameLength);
    if (name === 'ERROR')
      return `the publisher refused: ${body.toString('latin1', 2 + nameLength, 2 + nameLength + (body[1 + nameLength] ?? 0))}`;
    if (name === 'READY') this.#ready = true;
    return null;
  }

  /**
   * One whole message, its `count` frames at FRAMES in `data`. The envelope is read in
   * place: the topic compared by its bytes with the one subscribed to (a longer one's
   * text decoded once while it stays the same), the sequence read from the bytes, and
   * the payload copied out only when it differs from the last message's; an unchanged
   * one is handed on as the same buffer again, so a consumer may tell a heartbeat by
   * identity. Anything that is not a plain envelope goes through readPushFrameOr,
   * which says what is wrong.
   */
  #message(data: Buffer, count: number): void {
    this.received++;
    if (count !== 3 || FRAMES[3] !== 8 || data.readUInt32BE(FRAMES[2]!) > 0x1fffff) {
      const frames: Buffer[] = [];
      for (let i = 0; i < count; i++) frames.push(data.subarray(FRAMES[2 * i]!, FRAMES[2 * i]! + FRAMES[2 * i + 1]!));
      // readPushFrame refuses every one of these, and says why; a plain envelope is read below.
      readPushFrameOr(frames, this.#malformed);
      return;
    }
    const topicAt = FRAMES[0]!;
    const topicLength = FRAMES[1]!;
    // The publisher filters by prefix; this only guards against one that does not.
    const subscribed = this.#subscribed;
    if (topicLength < subscribed.bytes.length || !sameBytes(data, topicAt, subscribed.bytes, 0, subscribed.bytes.length)) return;
    let topic = subscribed;
    if (topicLength > subscribed.bytes.length) {
      topic = this.#longer;
      if (topic.bytes.length !== topicLength || !sameBytes(data, topicAt, topic.bytes, 0, topicLength))
        this.#longer = topic = newTopic(Buffer.from(data.subarray(topicAt, topicAt + topicLength)));
    }
    const seqAt = FRAMES[2]!;
    const seq = data.readUInt32BE(seqAt) * 0x1_0000_0000 + data.readUInt32BE(seqAt + 4);
    const payloadAt = FRAMES[4]!;
    const payloadLength = FRAMES[5]!;
    let payload = this.#payload;
    // Its own copy: the frame's bytes are in the shared read buffer.
    if (payload === undefined || payload.length !== payloadLength || !sameBytes(data, payloadAt, payload, 0, payloadLength))
      this.#payload = payload = Buffer.from(data.subarray(payloadAt, payloadAt + payloadLength));
    this.onMessage(payload, seq, topic.text);
  }
}

/** Whether `a[aAt..aAt+n)` and `b[bAt..bAt+n)` hold the same bytes; a loop, as these are a few dozen bytes. */
function sameBytes(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[aAt + i] !== b[bAt + i]) return false;
  return true;
}
