import { isIP } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { selectorQuery } from '../../config/index.js';
import type { Selector } from '../../config/index.js';
import type { Logger } from '../logging/logger.js';
import { applyFleet } from './discovery.js';
import type { DiscoveredFleet, Discovery } from './discovery.js';
import type { Resolution } from './dns-discovery.js';
import { KubeApi, KubeApiError } from './kube-api.js';
import type { KubeObject, WatchEvent } from './kube-api.js';
import { loadKubeCredentials } from './kube-credentials.js';

/** `--service-discovery` and its settings (docs/http-edge.md §Kubernetes discovery). */
export interface KubernetesDiscoveryOptions {
  /** Pods carrying every one of these labels; used when `service` is null. */
  readonly selector: Selector;
  /** Watch this Service's EndpointSlices instead of pods. */
  readonly service: string | null;
  /** null: the context's or the pod's own namespace, else `default`. */
  readonly namespace: string | null;
  /** The engines' port: pods' (null: 8000), or the slice port of this number (null: the slice's first). */
  readonly port: number | null;
  /** null: in-cluster credentials. */
  readonly kubeconfig: string | null;
  /** First pause after a failed list or watch, doubled up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
  readonly requestTimeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
}

/** The Rust sgl-router's default engine port for discovered pods. */
export const DEFAULT_POD_PORT = 8000;
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** What is watched: the collection, its label selector, and the worker URLs one object stands for. */
interface Watched {
  readonly path: string;
  readonly labels: Selector;
  readonly urls: (o: KubeObject) => string[];
}

/**
 * The fleet as the Kubernetes API lists it: pods by label selector, as the Rust
 * sgl-router watches them, or a Service's EndpointSlices, as Envoy's EDS and kube-proxy
 * read them. A list, then a watch from its resourceVersion; a watch that ends or
 * breaks is resumed from the last version seen, and one whose version is gone (410)
 * lists again. Each change is diffed against the fleet and applied through the
 * router's membership, as DNS discovery does (docs/http-edge.md §Membership). A list
 * that fails leaves the fleet as it is: an API server that goes away must not drain
 * the router.
 */
export class KubernetesDiscovery implements Discovery {
  readonly mode = 'kubernetes';
  readonly #objects = new Map<string, string[]>();
  readonly #abort = new AbortController();
  #api: KubeApi | undefined;
  #watched: Watched | undefined;
  #namespace = '';
  #resourceVersion: string | undefined;
  #loop: Promise<void> | undefined;
  #lastFailure: string | undefined;

  constructor(
    private readonly o: KubernetesDiscoveryOptions,
    private readonly fleet: DiscoveredFleet,
    private readonly log: Logger,
  ) {}

  /** What is watched, in words: `pods app=sglang in namespace default`. */
  get description(): string {
    const what = this.o.service !== null ? `EndpointSlices of Service ${this.o.service}` : `pods ${selectorQuery(this.o.selector)}`;
    // Before the credentials are read, the namespace may not be known yet.
    const namespace = this.#namespace || this.o.namespace;
    return namespace ? `${what} in namespace ${namespace}` : what;
  }

  /**
   * Read the credentials (a failure here stops the start: it is the operator's to fix),
   * list once and apply it, then watch until stop().
   */
  async start(): Promise<void> {
    await this.#connect();
    const listed = await this.#list();
    this.#loop = this.#run(listed);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    await this.#api?.close();
  }

  /** List once, for check-config --probe: the worker URLs now, sorted, or why there are none. */
  async listOnce(): Promise<Resolution> {
    await this.#connect();
    try {
      await this.#listOrThrow();
      return { ok: true, urls: this.#wanted() };
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    } finally {
      await this.#api?.close();
    }
  }

  async #connect(): Promise<void> {
    const creds = await loadKubeCredentials(this.o.kubeconfig, this.o.env);
    this.#namespace = this.o.namespace ?? creds.namespace ?? 'default';
    this.#api = new KubeApi(creds, this.o.requestTimeoutMs ?? 10_000);
    this.#watched = this.o.service !== null ? this.#slices(this.o.service) : this.#pods();
    this.log.info('Kubernetes discovery', { watching: this.description, api: creds.server, credentials: creds.source });
  }

  /** List, replace what is known with it, and apply it; false (the fleet left alone) when the list fails. */
  async #list(): Promise<boolean> {
    try {
      await this.#listOrThrow();
      if (this.#lastFailure !== undefined) this.log.info('Kubernetes discovery lists again', { workers: this.#wanted().length });
      this.#lastFailure = undefined;
      this.#apply();
      return true;
    } catch (err) {
      if (this.#abort.signal.aborted) return false;
      this.#failed('list failed; the fleet stays as it is', err);
      return false;
    }
  }

  async #listOrThrow(): Promise<void> {
    const w = this.#watched!;
    const list = await this.#api!.list(w.path, { labelSelector: selectorQuery(w.labels) }, this.#abort.signal);
    this.#objects.clear();
    for (const item of list.items ?? []) {
      const name = item.metadata?.name;
      if (typeof name === 'string') this.#objects.set(name, w.urls(item));
    }
    this.#resourceVersion = list.metadata?.resourceVersion;
  }

  /** Watch from the last version; resume when the stream ends or breaks, list again when the version is gone. */
  async #run(listed: boolean): Promise<void> {
    const signal = this.#abort.signal;
    const w = this.#watched!;
    let failures = listed ? 0 : 1;
    while (!signal.aborted) {
      if (failures > 0) {
        const base = this.o.retryMs ?? 500;
        await sleep(Math.min(this.o.maxRetryMs ?? 30_000, base * 2 ** (failures - 1)), undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
      }
      if (this.#resourceVersion === undefined) {
        failures = (await this.#list()) ? 0 : failures + 1;
        if (failures > 0) continue;
      }
      const startedAt = performance.now();
      let events = 0;
      try {
        const query = { labelSelector: selectorQuery(w.labels), resourceVersion: this.#resourceVersion ?? '' };
        await this.#api!.watch(w.path, query, (e) => void (events++, this.#event(e)), signal);
        // Ended by the server (its timeout): resume at once, unless it ends as soon as it starts.
        failures = events === 0 && performance.now() - startedAt < 1000 ? failures + 1 : 0;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof KubeApiError && err.code === 410) {
          this.log.info('Kubernetes discovery: the watched version is gone (410); listing again', { watching: this.description });
          this.#resourceVersion = undefined;
        } else {
          this.#failed('watch broke; resuming from the last version', err);
        }
        failures = events > 0 ? 1 : failures + 1;
      }
    }
  }

  #event(e: WatchEvent): void {
    const version = e.object.metadata?.resourceVersion;
    if (typeof version === 'string') this.#resourceVersion = version;
    const name = e.object.metadata?.name;
    if (e.type === 'BOOKMARK' || typeof name !== 'string') return;
    if (e.type === 'DELETED') this.#objects.delete(name);
    else this.#objects.set(name, this.#watched!.urls(e.object));
    if (this.#lastFailure !== undefined) this.log.info('Kubernetes discovery watches again', { watching: this.description });
    this.#lastFailure = undefined;
    this.#apply();
  }

  #failed(what: string, err: unknown): void {
    const reason = (err as Error).message;
    if (reason !== this.#lastFailure) this.log.warn(`Kubernetes discovery: ${what}`, { watching: this.description, reason });
    this.#lastFailure = reason;
  }

  #wanted(): string[] {
    return [...new Set([...this.#objects.values()].flat())].sort();
  }

  #apply(): void {
    applyFleet(this.fleet, this.#wanted());
  }

  /** Pods: one worker per pod that is Running and Ready, has an IP and is not being deleted. */
  #pods(): Watched {
    const port = this.o.port ?? DEFAULT_POD_PORT;
    const labels = this.o.selector;
    return {
      path: `/api/v1/namespaces/${encodeURIComponent(this.#namespace)}/pods`,
      labels,
      urls: (pod) => {
        const meta = (pod.metadata ?? {}) as { labels?: Record<string, string>; deletionTimestamp?: unknown };
        const status = (pod.status ?? {}) as { phase?: string; podIP?: string; conditions?: { type?: string; status?: string }[] };
        const ready = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
        const matches = labels.every(([k, v]) => meta.labels?.[k] === v);
        if (!matches || meta.deletionTimestamp != null || status.phase !== 'Running' || !ready || !status.podIP) return [];
        return [workerUrl(status.podIP, port)];
      },
    };
  }

  /** EndpointSlices: one worker per endpoint not marked unready, on the slice's port (or the one of --service-discovery-port). */
  #slices(service: string): Watched {
    const labels: Selector = [[SERVICE_NAME_LABEL, service]];
    return {
      path: `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(this.#namespace)}/endpointslices`,
      labels,
      urls: (slice) => {
        const meta = (slice.metadata ?? {}) as { labels?: Record<string, string> };
        if (meta.labels?.[SERVICE_NAME_LABEL] !== service) return [];
        if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') return [];
        const ports = (Array.isArray(slice.ports) ? slice.ports : []) as { port?: number }[];
        const port = this.o.port === null ? ports[0]?.port : ports.find((p) => p.port === this.o.port)?.port;
        if (typeof port !== 'number') return [];
        const endpoints = (Array.isArray(slice.endpoints) ? slice.endpoints : []) as {
          addresses?: string[];
          conditions?: { ready?: boolean };
        }[];
        // Addresses of one endpoint are fungible: the first stands for it.
        return endpoints
          .filter((e) => e.conditions?.ready !== false && typeof e.addresses?.[0] === 'string')
          .map((e) => workerUrl(e.addresses![0]!, port));
      },
    };
  }
}

function workerUrl(ip: string, port: number): string {
  return `http://${isIP(ip) === 6 ? `[${ip}]` : ip}:${port}`;
}
