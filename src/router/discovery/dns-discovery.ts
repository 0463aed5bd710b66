import { isIP } from 'node:net';
import { Resolver } from 'node:dns/promises';
import type { Logger } from '../logging/logger.js';
import { applyFleet } from './discovery.js';
import type { DiscoveredFleet, Discovery } from './discovery.js';

export type { DiscoveredFleet };

/** `--dns-discovery` and its settings (docs/http-edge.md §DNS discovery). */
export interface DnsDiscoveryOptions {
  /** SRV records when it starts with `_` (`_service._proto.name`), else A/AAAA records. */
  readonly name: string;
  /** The engines' port for A/AAAA records; SRV records carry their own. */
  readonly port: number | null;
  readonly scheme: 'http' | 'https';
  /** `HOST:PORT` of the DNS server to ask; null: the system's. */
  readonly resolver: string | null;
  readonly intervalMs: number;
}

export type Resolution = { readonly ok: true; readonly urls: readonly string[] } | { readonly ok: false; readonly reason: string };

/**
 * Answers that say the name has no records now: the fleet is empty. Anything else
 * (a timeout, SERVFAIL, a refused or unreachable server) says nothing about the fleet,
 * which then stays as it was: a resolver that goes away must not drain the router.
 */
const EMPTY_ANSWERS = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * The fleet as a DNS name lists it, resolved again every interval, as a headless
 * Kubernetes Service, Consul or Nomad expose engines. Each resolution is compared with
 * the fleet, and the difference is added and removed through the router's membership,
 * so a DNS change is the same join and leave as an admin call (docs/http-edge.md
 * §Membership).
 */
export class DnsDiscovery implements Discovery {
  readonly mode = 'dns';
  readonly #resolver: Resolver;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #lastFailure: string | undefined;

  constructor(
    private readonly o: DnsDiscoveryOptions,
    private readonly fleet: DiscoveredFleet,
    private readonly log: Logger,
  ) {
    // One try a few seconds long: the next interval is the retry.
    this.#resolver = new Resolver({ timeout: Math.min(2000, Math.max(200, o.intervalMs)), tries: 1 });
    if (o.resolver !== null) this.#resolver.setServers([o.resolver]);
  }

  /** Resolve once and apply it; then again every interval until stop(). */
  async start(): Promise<void> {
    await this.sync();
    const tick = (): void => {
      this.#running = this.sync().finally(() => {
        this.#running = undefined;
        if (this.#timer !== undefined) this.#timer = setTimeout(tick, this.o.intervalMs).unref();
      });
    };
    this.#timer = setTimeout(tick, this.o.intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One resolution applied to the fleet. */
  async sync(): Promise<void> {
    const r = await this.resolve();
    if (!r.ok) {
      if (r.reason !== this.#lastFailure) {
        this.log.warn('DNS discovery: no answer; the fleet stays as it is', { name: this.o.name, reason: r.reason });
      }
      this.#lastFailure = r.reason;
      return;
    }
    if (this.#lastFailure !== undefined) this.log.info('DNS discovery answers again', { name: this.o.name, workers: r.urls.length });
    this.#lastFailure = undefined;
    applyFleet(this.fleet, r.urls);
  }

  /** The worker URLs the name lists now, sorted; or why there is no answer. */
  async resolve(): Promise<Resolution> {
    const name = this.o.name.trim();
    try {
      if (name.startsWith('_')) {
        const records = await this.#resolver.resolveSrv(name);
        const urls: string[] = [];
        for (const rec of records) for (const address of await this.#addresses(rec.name)) urls.push(this.#url(address, rec.port));
        return { ok: true, urls: [...new Set(urls)].sort() };
      }
      const port = this.o.port ?? 0;
      return { ok: true, urls: [...new Set((await this.#addresses(name)).map((a) => this.#url(a, port)))].sort() };
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'ERROR';
      if (EMPTY_ANSWERS.has(code)) return { ok: true, urls: [] };
      return { ok: false, reason: `${code}: ${(err as Error).message}` };
    }
  }

  /** A host's addresses: itself when it is one, else its A records, else its AAAA records; none when it has neither. */
  async #addresses(host: string): Promise<string[]> {
    if (isIP(host) !== 0) return [host];
    for (const lookup of [(h: string) => this.#resolver.resolve4(h), (h: string) => this.#resolver.resolve6(h)]) {
      try {
        const found = await lookup(host);
        if (found.length > 0) return found;
      } catch (err) {
        if (!EMPTY_ANSWERS.has((err as { code?: string }).code ?? '')) throw err;
      }
    }
    return [];
  }

  #url(address: string, port: number): string {
    return `${this.o.scheme}://${isIP(address) === 6 ? `[${address}]` : address}:${port}`;
  }
}
