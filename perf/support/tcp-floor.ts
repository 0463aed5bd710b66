/**
 * What Node itself costs for the load channel's traffic, with nothing of the router
 * in it: the floor under fleet-push's push figure. Two processes over loopback TCP:
 *
 * - `send N [--bytes 60]` listens on a port of the kernel's pick, accepts N
 *   connections and writes each one message of `--bytes` bytes a second, the fleet's
 *   messages spread evenly over the second (as fast-push-upstream spreads its
 *   heartbeats); it prints the port.
 * - `receive PORT N` opens N connections to it and reads each with `onread` into one
 *   buffer all of them share (as ZmtpSubscription does), and does nothing else with
 *   the bytes; it prints `ready` once every connection is up.
 *
 * fleet-push --floor starts both and reads the receiver's CPU from /proc.
 *
 *   node dist/perf/support/tcp-floor.js send 4096 [--bytes 60] [--tick-ms 10]
 *   node dist/perf/support/tcp-floor.js receive PORT 4096
 */
import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { benchArg } from './args.js';

const HEARTBEAT_MS = 1000;

/** Each tick writes its share of the second's messages: every 10 ms as fast-push-upstream does, or `--tick-ms 1` for wake-ups closer to independent engines'. */
function send(n: number, bytes: number, tickMs: number): void {
  const message = Buffer.alloc(bytes, 0x61);
  const peers: Socket[] = [];
  const server = createServer((s) => {
    s.setNoDelay(true);
    s.on('error', () => s.destroy());
    peers.push(s);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as { port: number }).port}\n`));
  let cursor = 0;
  let carry = 0;
  setInterval(() => {
    if (peers.length === 0) return;
    carry += (n * tickMs) / HEARTBEAT_MS;
    for (; carry >= 1; carry--) {
      peers[cursor % peers.length]!.write(message);
      cursor = (cursor + 1) % peers.length;
    }
  }, tickMs);
}

function receive(port: number, n: number): void {
  const buffer = Buffer.alloc(64 * 1024);
  let up = 0;
  let bytes = 0;
  const open = (i: number): void => {
    if (i >= n) return;
    const s = connect({
      host: '127.0.0.1',
      port,
      noDelay: true,
      onread: {
        buffer,
        callback: (length) => {
          bytes += length;
          return true;
        },
      },
    });
    s.on('error', (err) => {
      throw err;
    });
    s.on('connect', () => {
      if (++up === n) process.stdout.write('ready\n');
      // A few at a time: a burst of thousands of connects overflows the listener's backlog.
      open(i + 64);
    });
  };
  for (let i = 0; i < 64; i++) open(i);
  // Read on exit so the byte count is not optimised away; prints what arrived.
  process.on('SIGTERM', () => {
    process.stdout.write(`${bytes} bytes\n`);
    process.exit(0);
  });
}

const [mode, a, b] = process.argv.slice(2);
if (mode === 'send') send(Number(a), Number(benchArg('bytes', '60')), Number(benchArg('tick-ms', '10')));
else if (mode === 'receive') receive(Number(a), Number(b));
else throw new Error('usage: tcp-floor send N [--bytes 60] [--tick-ms 10] | receive PORT N');
