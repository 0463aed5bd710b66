import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeMsgpack } from '../../src/msgpack/index.js';
import { sequenceFrame } from '../../src/engines/index.js';
import type { PushInfo } from '../../src/engines/index.js';
import { LoadPush, LoadTable } from '../../src/router/state/load-monitor/index.js';
import { PUSH_SILENT_AFTER_MS } from '../../src/router/state/load-monitor/load-push.js';
import { CircuitBreaker } from '../../src/router/upstream/circuit-breaker.js';
import { Worker } from '../../src/router/upstream/worker.js';
import { eventually } from '../helpers/http.js';
import { publisherHandshake } from '../helpers/zmtp-publisher.js';

/**
 * The load channel's consumer (docs/engine-load.md §Load by push): LoadPush on real
 * ZMTP streams from publishers written by hand over 127.0.0.1, feeding a real load
 * table, on a clock the test sets (frames are stamped with it on arrival).
 */
const closers: Array<() => void> = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** A ZMTP 3.0 PUB by hand: the greeting and READY to each subscriber, then whatever `send` writes. */
class HandPublisher {
  readonly sockets: Socket[] = [];
  constructor(readonly server: Server) {
    server.on('connection', (socket) => {
      socket.on('error', () => undefined);
      socket.write(publisherHandshake(0));
      this.sockets.push(socket);
    });
    closers.push(() => {
      for (const s of this.sockets) s.destroy();
      server.close();
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** One LoadStat envelope on topic `load`. */
  send(seq: number, waiting: number): void {
    const frames = [Buffer.from('load'), sequenceFrame(seq), encodeMsgpack(['LoadStat', 0, waiting, 0, 1000, 0])];
    const bytes = Buffer.concat(frames.map((f, i) => Buffer.concat([Buffer.from([i < 2 ? 1 : 0, f.length]), f])));
    for (const s of this.sockets) s.write(bytes);
  }
}

async function listen(port = 0): Promise<HandPublisher | undefined> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(new HandPublisher(server)));
  });
}

/** Publishers for ranks 0..n-1 of one engine: on consecutive ports, as SGLang binds them. */
async function ranks(n: number): Promise<HandPublisher[]> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const first = (await listen())!;
    const rest: HandPublisher[] = [];
    for (let r = 1; r < n; r++) {
      const next = await listen(first.port + r);
      if (next === undefined) break;
      rest.push(next);
    }
    if (rest.length === n - 1) return [first, ...rest];
  }
  throw new Error('no run of free ports');
}

function pushInfo(loadPortBase: number, dpSize: number): PushInfo {
  return {
    host: '127.0.0.1',
    kvPortBase: 1,
    kvTopic: 'kv',
    blockSize: 16,
    dpSize,
    loadPortBase,
    loadTopic: 'load',
    replayHost: null,
    replayPortBase: null,
    replayFrom: null,
    snapshotHost: null,
    snapshotPortBase: null,
  };
}

function worker(slot: number): Worker {
  const url = 'http://127.0.0.1:9';
  const pool = new Pool(url);
  closers.push(() => void pool.close());
  return new Worker(url, slot, pool, new CircuitBreaker(null, 1000));
}

function setUp(): { table: LoadTable; push: LoadPush; clock: { now: number } } {
  const clock = { now: 1000 };
  const table = new LoadTable(60_000);
  const push = new LoadPush(table, () => clock.now);
  closers.push(() => push.close());
  return { table, push, clock };
}

describe('LoadPush', () => {
  it('two ranks: live once both have spoken, the sample dated by the older rank, silent past PUSH_SILENT_AFTER_MS of it', async () => {
    const { table, push, clock } = setUp();
    const [r0, r1] = (await ranks(2)) as [HandPublisher, HandPublisher];
    const w = worker(0);
    table.register(w);
    push.attach(w, pushInfo(r0.port, 2));
    await eventually(async () => r0.sockets.length === 1 && r1.sockets.length === 1, 3000);
    const frames = (): number => push.stats(w)!.frames;

    r0.send(0, 1);
    await eventually(async () => frames() === 1, 3000);
    expect(push.isLive(w, clock.now)).toBe(false);
    expect(table.lastKnown(w)).toBeUndefined();

    clock.now = 1500;
    r1.send(0, 2);
    await eventually(async () => frames() === 2, 3000);
    expect(table.lastKnown(w)).toMatchObject({ waiting: 3 });
    expect(table.sampleAge(w, 1500)).toBe(500);
    expect([push.isLive(w, 1000 + PUSH_SILENT_AFTER_MS), push.isLive(w, 1001 + PUSH_SILENT_AFTER_MS)]).toEqual([true, false]);

    // A heartbeat of rank 0 (the same bytes): the sample is now dated by rank 1.
    clock.now = 2000;
    r0.send(1, 1);
    await eventually(async () => frames() === 3, 3000);
    expect(table.lastKnown(w)).toMatchObject({ waiting: 3 });
    expect(table.sampleAge(w, 2000)).toBe(500);
    expect([push.isLive(w, 1500 + PUSH_SILENT_AFTER_MS), push.isLive(w, 1501 + PUSH_SILENT_AFTER_MS)]).toEqual([true, false]);

    // A change, then its heartbeat, then the old reading again: each reaches the table.
    for (const [seq, waiting, sum] of [
      [1, 5, 6],
      [2, 5, 6],
      [3, 2, 3],
    ] as const) {
      clock.now += 500;
      r1.send(seq, waiting);
      await eventually(async () => push.stats(w)!.frames === 3 + seq, 3000);
      expect(table.lastKnown(w)).toMatchObject({ waiting: sum });
    }
    expect(table.sampleAge(w, clock.now)).toBe(clock.now - 2000);
    expect(push.stats(w)).toMatchObject({ frames: 6, decodeErrors: 0, missed: 0, resets: 0 });
  });

  it('detaching a worker ends its push and nothing else: another worker stays live, and a stranger on its slot is not it', async () => {
    const { table, push, clock } = setUp();
    const [pa] = (await ranks(1)) as [HandPublisher];
    const [pb] = (await ranks(1)) as [HandPublisher];
    const a = worker(0);
    const b = worker(1);
    for (const [w, p] of [
      [a, pa],
      [b, pb],
    ] as const) {
      table.register(w);
      push.attach(w, pushInfo(p.port, 1));
    }
    await eventually(async () => pa.sockets.length === 1 && pb.sockets.length === 1, 3000);
    pa.send(0, 4);
    pb.send(0, 1);
    await eventually(async () => push.stats(a)?.frames === 1 && push.stats(b)?.frames === 1, 3000);
    expect([push.isLive(a, clock.now), push.isLive(b, clock.now), push.has(a)]).toEqual([true, true, true]);
    const stranger = worker(0);
    expect([push.isLive(stranger, clock.now), push.has(stranger), push.stats(stranger)]).toEqual([false, false, undefined]);

    push.detach(a);
    expect([push.isLive(a, clock.now), push.has(a), push.stats(a)]).toEqual([false, false, undefined]);
    clock.now = 2000;
    pa.send(1, 7);
    pb.send(1, 2);
    await eventually(async () => push.stats(b)!.frames === 2, 3000);
    expect(push.isLive(b, clock.now)).toBe(true);
    expect(table.lastKnown(b)).toMatchObject({ waiting: 2 });
    // a's last sample stays as it was (it ages out in the table), and nothing more came by push.
    expect(table.lastKnown(a)).toMatchObject({ waiting: 4 });
    expect(table.sampleAge(a, 2000)).toBe(1000);
  });
});
