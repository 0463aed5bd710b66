import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { readFileSync } from 'node:fs';

/**
 * Vitest global setup. fetch (and so the official `openai` client) refuses the ports
 * the WHATWG Fetch standard lists as bad ("block bad port") with "fetch failed: bad
 * port". Tests listen on port 0, and where the kernel's ephemeral range is wide (1024
 * and up, as in some CI containers) it can hand a test server 6000 or 6666, and the
 * test then fails for the port it drew. Holding those ports on 127.0.0.1 for the run
 * keeps the kernel from handing them out; one already taken is left alone.
 */
const FETCH_BLOCKED_PORTS = [
  1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
];

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'latin1').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // Not Linux: hold them all, it costs nothing.
  }
  return [1024, 65535];
}

function hold(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

export default async function setup(): Promise<() => Promise<void>> {
  const [low, high] = ephemeralRange();
  const held = (await Promise.all(FETCH_BLOCKED_PORTS.filter((p) => p >= low && p <= high).map(hold))).filter(
    (s): s is Server => s !== null,
  );
  return async () => {
    await Promise.all(held.map((s) => new Promise<void>((r) => s.close(() => r()))));
  };
}
