import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from './http.js';

/** Where Debian's dnsmasq-base puts it (.ci/run installs it); undefined when it is not there. */
export const DNSMASQ = ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq'].find((p) => spawnSync('test', ['-x', p]).status === 0);

/** A UDP port free on 127.0.0.1 now. */
export async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
  const port = s.address().port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/**
 * A real DNS server on a loopback port for the zone `fleet.test`, whose records a test
 * sets with `serve(lines)` (dnsmasq config lines: `srv-host=…`, `host-record=…`).
 * dnsmasq re-reads only its hosts files on a signal, so each change restarts it on the
 * same port.
 */
export class Dnsmasq {
  port = 0;
  #dir = '';
  #child: ChildProcess | undefined;

  get resolver(): string {
    return `127.0.0.1:${this.port}`;
  }

  async serve(lines: readonly string[]): Promise<void> {
    if (DNSMASQ === undefined) throw new Error('dnsmasq not found: install Debian package dnsmasq-base (.ci/run does)');
    // A port found free can be taken by another process before dnsmasq binds it: then it exits, and a new port is tried.
    for (let attempt = 0; ; attempt++) {
      if (await this.#start(lines)) return;
      if (attempt === 4) throw new Error(`dnsmasq did not start on 127.0.0.1:${this.port}`);
      this.port = 0;
    }
  }

  /** Start dnsmasq and wait until it answers; false when it exited first. */
  async #start(lines: readonly string[]): Promise<boolean> {
    await this.stop();
    if (!this.#dir) this.#dir = mkdtempSync(path.join(tmpdir(), 'routerctl-dns-'));
    if (this.port === 0) this.port = await freeUdpPort();
    const conf = path.join(this.#dir, 'dnsmasq.conf');
    const head = [`port=${this.port}`, 'listen-address=127.0.0.1', 'bind-interfaces', 'no-resolv', 'no-hosts', 'local=/fleet.test/'];
    writeFileSync(conf, [...head, ...lines].join('\n'));
    // As root, dnsmasq would drop to user nobody, who cannot read the conf in our temp dir; as anyone else it stays who it is.
    const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
    const child = spawn(DNSMASQ!, ['--keep-in-foreground', `--conf-file=${conf}`, '--pid-file=', ...asRoot], { stdio: 'ignore' });
    this.#child = child;
    let exited = false;
    child.once('exit', () => (exited = true));
    // Answering: a query for a name in its zone comes back (NXDOMAIN is an answer).
    const probe = new Resolver({ timeout: 200, tries: 1 });
    probe.setServers([this.resolver]);
    await eventually(async () => {
      if (exited) return true;
      try {
        await probe.resolveAny('probe.fleet.test');
        return true;
      } catch (err) {
        const code = (err as { code?: string }).code;
        return code === 'ENOTFOUND' || code === 'ENODATA';
      }
    }, 15_000);
    return !exited;
  }

  async stop(): Promise<void> {
    const d = this.#child;
    this.#child = undefined;
    if (!d || d.exitCode !== null) return;
    const gone = new Promise((r) => d.once('exit', r));
    d.kill('SIGTERM');
    await gone;
  }

  /** Stop and remove its files. */
  async close(): Promise<void> {
    await this.stop();
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = '';
  }
}

/** One SRV record line. */
export const srv = (name: string, target: string, port: number): string => `srv-host=${name},${target},${port}`;
