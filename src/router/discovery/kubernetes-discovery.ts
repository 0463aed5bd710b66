import { isIP } from 'node:net';
import { selectorQuery } from '../../config/index.js';
import type { Selector } from '../../config/index.js';
import type { Logger } from '../logging/logger.js';
import { applyFleet } from './discovery.js';
import type { DiscoveredFleet, Discovery } from './discovery.js';
import type { Resolution } from './dns-discovery.js';
import { INFERENCE_POOL_API, fieldValue, readPool, samePool } from './inference-pool.js';
import type { PoolSpec } from './inference-pool.js';
import { KubeApi } from './kube-api.js';
import type { KubeObject } from './kube-api.js';
import { loadKubeCredentials } from './kube-credentials.js';
import { CollectionWatch } from './kube-watch.js';
import type { WatchTarget } from './kube-watch.js';

/** `--service-discovery` and its settings (docs/http-edge.md §Kubernetes discovery). */
export interface KubernetesDiscoveryOptions {
  /** Pods carrying every one of these labels; used when `service` and `inferencePool` are null. */
  readonly selector: Selector;
  /** Watch this Service's EndpointSlices instead of pods. */
  readonly service: string | null;
  /** Watch this InferencePool, and the pods its selector picks on its target port. */
  readonly inferencePool: string | null;
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

/**
 * The fleet as the Kubernetes API lists it: pods by label selector, as the Rust
 * sgl-router watches them; a Service's EndpointSlices, as Envoy's EDS and kube-proxy
 * read them; or the pods of a Gateway API Inference Extension InferencePool, as its
 * endpoint picker finds them. Each collection is listed, then watched from the list's
 * resourceVersion (kube-watch.ts). Each change is diffed against the fleet and applied
 * through the router's membership, as DNS discovery does (docs/http-edge.md
 * §Membership). A list that fails, or a pool that is gone, leaves the fleet as it is:
 * an API server that goes away must not drain the router.
 */
export class KubernetesDiscovery implements Discovery {
  readonly mode = 'kubernetes';
  #api: KubeApi | undefined;
  #namespace = '';
  /** What stands for the fleet: pods or EndpointSlices. Under a pool, replaced when the pool changes. */
  #fleet: CollectionWatch<string[]> | undefined;
  #pool: CollectionWatch<PoolSpec> | undefined;
  /** The pool as the pods' watch follows it. */
  #followed: PoolSpec | undefined;
  /** Why the pool stands for nothing now, as last logged. */
  #poolProblem: string | undefined;
  /** Stopping one pods' watch and starting the next, in order. */
  #switching: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly o: KubernetesDiscoveryOptions,
    private readonly fleet: DiscoveredFleet,
    private readonly log: Logger,
  ) {}

  /** What is watched, in words: `pods app=sglang in namespace default`. */
  get description(): string {
    let what: string;
    if (this.o.inferencePool !== null) {
      const f = this.#followed;
      what = `InferencePool ${this.o.inferencePool}${f?.ok ? ` (pods ${selectorQuery(f.selector)} on port ${f.port})` : ''}`;
    } else {
      what = this.o.service !== null ? `EndpointSlices of Service ${this.o.service}` : `pods ${selectorQuery(this.o.selector)}`;
    }
    return this.#inNamespace(what);
  }

  /**
   * Read the credentials (a failure here stops the start: it is the operator's to fix),
   * list once and apply it (under a pool: the pool, then its pods), then watch until stop().
   */
  async start(): Promise<void> {
    const api = await this.#connect();
    if (this.o.inferencePool !== null) {
      this.#pool = new CollectionWatch(api, this.#poolTarget(this.o.inferencePool), () => this.#poolChanged(), this.log, this.o);
      await this.#pool.start();
      await this.#switching;
      return;
    }
    const target = this.o.service !== null ? this.#slices(this.o.service) : this.#pods(this.o.selector, this.o.port ?? DEFAULT_POD_PORT);
    const watch = (this.#fleet = new CollectionWatch(api, target, () => this.#apply(watch), this.log, this.o));
    await watch.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#pool?.stop();
    await this.#switching;
    await this.#fleet?.stop();
    await this.#api?.close();
  }

  /** List once, for check-config --probe: the worker URLs now, sorted, or why there are none. */
  async listOnce(): Promise<Resolution> {
    const api = await this.#connect();
    const none = (): void => undefined;
    try {
      let target: WatchTarget<string[]>;
      if (this.o.inferencePool !== null) {
        const pool = new CollectionWatch(api, this.#poolTarget(this.o.inferencePool), none, this.log);
        await pool.listOrThrow();
        const spec = pool.objects.get(this.o.inferencePool);
        if (spec === undefined) throw new Error(this.#poolMissing());
        if (!spec.ok) throw new Error(spec.reason);
        this.#followed = spec;
        target = this.#pods(spec.selector, spec.port);
      } else {
        target = this.o.service !== null ? this.#slices(this.o.service) : this.#pods(this.o.selector, this.o.port ?? DEFAULT_POD_PORT);
      }
      const watch = new CollectionWatch(api, target, none, this.log);
      await watch.listOrThrow();
      return { ok: true, urls: wanted(watch) };
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    } finally {
      await api.close();
    }
  }

  async #connect(): Promise<KubeApi> {
    const creds = await loadKubeCredentials(this.o.kubeconfig, this.o.env);
    this.#namespace = this.o.namespace ?? creds.namespace ?? 'default';
    this.#api = new KubeApi(creds, this.o.requestTimeoutMs ?? 10_000);
    this.log.info('Kubernetes discovery', { watching: this.description, api: creds.server, credentials: creds.source });
    return this.#api;
  }

  #inNamespace(what: string): string {
    // Before the credentials are read, the namespace may not be known yet.
    const namespace = this.#namespace || this.o.namespace;
    return namespace ? `${what} in namespace ${namespace}` : what;
  }

  #poolMissing(): string {
    return `InferencePool ${this.o.inferencePool} is not found in namespace ${this.#namespace}`;
  }

  /** The fleet as this watch lists it, unless another watch has taken its place. */
  #apply(watch: CollectionWatch<string[]>): void {
    if (watch === this.#fleet) applyFleet(this.fleet, wanted(watch));
  }

  /**
   * The pool was listed, or changed. A new selector or port restarts the pods' watch on
   * it, whose first list is diffed against the fleet. A pool that is gone, being deleted
   * or unreadable changes nothing: the pods of the pool as last read are followed still,
   * and that is logged once. The reference EPP empties its datastore there instead; an
   * API server hiccup or a pool re-created must not drain the router.
   */
  #poolChanged(): void {
    const spec = this.#pool!.objects.get(this.o.inferencePool!);
    if (spec === undefined || !spec.ok) {
      const problem = spec === undefined ? this.#poolMissing() : `InferencePool ${this.o.inferencePool} stands for no pods: ${spec.reason}`;
      if (problem !== this.#poolProblem) {
        this.log.warn(`Kubernetes discovery: ${problem}; the fleet stays as it is`, { watching: this.description });
      }
      this.#poolProblem = problem;
      return;
    }
    if (this.#poolProblem !== undefined) this.log.info('Kubernetes discovery: the InferencePool is back', { watching: this.description });
    this.#poolProblem = undefined;
    if (samePool(spec, this.#followed)) return;
    this.#followed = spec;
    this.log.info('Kubernetes discovery follows the InferencePool', { watching: this.description });
    const previous = this.#fleet;
    const next = new CollectionWatch(this.#api!, this.#pods(spec.selector, spec.port), () => this.#apply(next), this.log, this.o);
    // Taken at once: the previous watch's late events are no longer the fleet.
    this.#fleet = next;
    this.#switching = this.#switching.then(async () => {
      await previous?.stop();
      if (!this.#stopped) await next.start();
    });
  }

  /** The pool by name: a list and watch of the collection, by field selector, as the reference EPP's cache does. */
  #poolTarget(name: string): WatchTarget<PoolSpec> {
    return {
      path: `/apis/${INFERENCE_POOL_API}/namespaces/${encodeURIComponent(this.#namespace)}/inferencepools`,
      query: { fieldSelector: `metadata.name=${fieldValue(name)}` },
      read: readPool,
      description: this.#inNamespace(`InferencePool ${name}`),
    };
  }

  /** Pods: one worker per pod that is Running and Ready, has an IP and is not being deleted. */
  #pods(labels: Selector, port: number): WatchTarget<string[]> {
    return {
      path: `/api/v1/namespaces/${encodeURIComponent(this.#namespace)}/pods`,
      query: { labelSelector: selectorQuery(labels) },
      description: this.#inNamespace(`pods ${selectorQuery(labels)}`),
      read: (pod: KubeObject) => {
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
  #slices(service: string): WatchTarget<string[]> {
    return {
      path: `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(this.#namespace)}/endpointslices`,
      query: { labelSelector: `${SERVICE_NAME_LABEL}=${service}` },
      description: this.#inNamespace(`EndpointSlices of Service ${service}`),
      read: (slice: KubeObject) => {
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

/** The worker URLs a watch's objects stand for, each once, sorted. */
function wanted(watch: CollectionWatch<string[]>): string[] {
  return [...new Set([...watch.objects.values()].flat())].sort();
}

function workerUrl(ip: string, port: number): string {
  return `http://${isIP(ip) === 6 ? `[${ip}]` : ip}:${port}`;
}
