import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { closeServer, listenLoopback } from './http.js';

/** One request the fake API server was sent: its path, query and bearer token. */
export interface KubeRequest {
  readonly path: string;
  readonly query: URLSearchParams;
  readonly token: string | undefined;
}

type KubeObject = { metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> } } & Record<string, unknown>;

interface Collection {
  readonly items: Map<string, KubeObject>;
  /** What changed, by version, for watches resumed from an older version. */
  readonly history: { rv: number; type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject }[];
  readonly kind: string;
  readonly apiVersion: string;
}

interface OpenWatch {
  readonly path: string;
  readonly selector: Selectors;
  readonly res: ServerResponse;
}

/** A request's `labelSelector` and `fieldSelector` terms (equality only, as the client sends them). */
interface Selectors {
  readonly labels: [string, string][];
  readonly fields: [string, string][];
}

/** Each collection the fake serves, by the path's last segment: its kind and API version. */
const KINDS: Record<string, { kind: string; apiVersion: string }> = {
  pods: { kind: 'Pod', apiVersion: 'v1' },
  endpointslices: { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' },
  inferencepools: { kind: 'InferencePool', apiVersion: 'inference.networking.k8s.io/v1' },
};
const SERVED =
  /^\/(api\/v1|apis\/discovery\.k8s\.io\/v1|apis\/inference\.networking\.k8s\.io\/v1)\/namespaces\/[^/]+\/(pods|endpointslices|inferencepools)$/;

/**
 * A Kubernetes API server for tests, on 127.0.0.1: pods (v1), EndpointSlices
 * (discovery.k8s.io/v1) and InferencePools (inference.networking.k8s.io/v1) in any
 * namespace, hand-made, chosen by label and by field (`metadata.name`). A list answers
 * the items and the collection's resourceVersion; a watch (?watch=1&resourceVersion=…) streams
 * newline-delimited JSON events from that version on, as the real one does, and
 * answers 410 for a version older than the last compaction. Tests drop watches, compact
 * and send ERROR events to drive the client through resume and re-list.
 */
export class FakeKubeApi {
  readonly requests: KubeRequest[] = [];
  readonly token = 'test-token';
  #server: Server | undefined;
  #collections = new Map<string, Collection>();
  #watches = new Set<OpenWatch>();
  #unserved = new Set<string>();
  #version = 100;
  #compactedAt = 0;
  #dir = '';
  url = '';

  /** Over TLS with this key and certificate, as a real API server is; plain HTTP without. */
  constructor(private readonly tls?: { key: string; cert: string }) {}

  async start(): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => this.#handle(req, res);
    this.#server = this.tls ? createTlsServer(this.tls, handler) : createServer(handler);
    const url = await listenLoopback(this.#server);
    this.url = this.tls ? url.replace(/^http:/, 'https:') : url;
    return this;
  }

  async close(): Promise<void> {
    for (const w of this.#watches) w.res.destroy();
    this.#watches.clear();
    if (this.#server) await closeServer(this.#server);
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
  }

  /** A kubeconfig naming this server (a token, a namespace, and these lines of its cluster: how to trust it). */
  kubeconfig(namespace = 'inference', clusterLines: string[] = []): string {
    if (!this.#dir) this.#dir = mkdtempSync(path.join(tmpdir(), 'routerctl-kube-'));
    const file = path.join(this.#dir, 'kubeconfig');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: test',
        'clusters:',
        '- name: fake',
        '  cluster:',
        `    server: ${this.url}`,
        ...clusterLines.map((l) => `    ${l}`),
        'users:',
        '- name: router',
        '  user:',
        `    token: ${this.token}`,
        'contexts:',
        '- name: test',
        '  context:',
        '    cluster: fake',
        '    user: router',
        `    namespace: ${namespace}`,
        '',
      ].join('\n'),
    );
    return file;
  }

  /** The version the next change gets is above this one. */
  get resourceVersion(): string {
    return String(this.#version);
  }

  /** Create or replace an object: ADDED or MODIFIED to the watches. */
  put(collectionPath: string, object: KubeObject): string {
    const c = this.#collection(collectionPath);
    const type = c.items.has(object.metadata.name) ? 'MODIFIED' : 'ADDED';
    const rv = ++this.#version;
    const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(rv) } };
    c.items.set(object.metadata.name, stored);
    this.#emit(collectionPath, c, { rv, type, object: stored });
    return String(rv);
  }

  delete(collectionPath: string, name: string): string {
    const c = this.#collection(collectionPath);
    const old = c.items.get(name);
    if (!old) throw new Error(`no ${name} in ${collectionPath}`);
    c.items.delete(name);
    const rv = ++this.#version;
    this.#emit(collectionPath, c, { rv, type: 'DELETED', object: { ...old, metadata: { ...old.metadata, resourceVersion: String(rv) } } });
    return String(rv);
  }

  /** A BOOKMARK to every open watch: the collection is at this version now (other kinds of objects moved it). */
  bookmark(): string {
    const rv = String(++this.#version);
    for (const w of this.#watches) {
      const kind = this.#collection(w.path).kind;
      w.res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind, apiVersion: 'v1', metadata: { resourceVersion: rv } } })}\n`);
    }
    return rv;
  }

  /** Cut every open watch mid-stream, as a lost connection or a restarted API server does. */
  dropWatches(): void {
    for (const w of this.#watches) w.res.destroy();
    this.#watches.clear();
  }

  /** Forget the history: a watch from any version seen so far is answered 410 Gone. */
  compact(): void {
    this.#compactedAt = this.#version;
    for (const c of this.#collections.values()) c.history.length = 0;
  }

  /** Tell every open watch its version is gone, with an ERROR event (code 410), and end it. */
  expireWatches(): void {
    for (const w of this.#watches) {
      w.res.end(`${JSON.stringify({ type: 'ERROR', object: gone('too old resource version') })}\n`);
    }
    this.#watches.clear();
  }

  /** Answer 404 to this collection, as an API server without its CustomResourceDefinition does; `serve` undoes it. */
  unserve(collectionPath: string): void {
    this.#unserved.add(collectionPath);
  }

  serve(collectionPath: string): void {
    this.#unserved.delete(collectionPath);
  }

  get openWatches(): number {
    return this.#watches.size;
  }

  lists(collectionPath: string): KubeRequest[] {
    return this.requests.filter((r) => r.path === collectionPath && r.query.get('watch') === null);
  }

  watches(collectionPath: string): KubeRequest[] {
    return this.requests.filter((r) => r.path === collectionPath && r.query.get('watch') === '1');
  }

  #collection(p: string): Collection {
    let c = this.#collections.get(p);
    if (!c) {
      const { kind, apiVersion } = KINDS[p.slice(p.lastIndexOf('/') + 1)] ?? KINDS.pods!;
      c = { items: new Map(), history: [], kind, apiVersion };
      this.#collections.set(p, c);
    }
    return c;
  }

  #emit(p: string, c: Collection, change: Collection['history'][number]): void {
    c.history.push(change);
    for (const w of this.#watches) {
      if (w.path === p && matches(change.object, w.selector)) w.res.write(`${JSON.stringify(event(c, change))}\n`);
    }
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const u = new URL(req.url ?? '/', 'http://fake');
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
    this.requests.push({ path: u.pathname, query: u.searchParams, token });
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (token !== this.token) return send(401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401, message: 'Unauthorized' });
    if (req.method !== 'GET' || !SERVED.test(u.pathname) || this.#unserved.has(u.pathname)) {
      return send(404, { kind: 'Status', code: 404, message: 'not found' });
    }
    const c = this.#collection(u.pathname);
    const selector = { labels: terms(u.searchParams.get('labelSelector')), fields: terms(u.searchParams.get('fieldSelector')) };
    if (u.searchParams.get('watch') !== '1') {
      return send(200, {
        kind: `${c.kind}List`,
        apiVersion: c.apiVersion,
        metadata: { resourceVersion: String(this.#version) },
        items: [...c.items.values()].filter((o) => matches(o, selector)),
      });
    }
    const from = Number(u.searchParams.get('resourceVersion'));
    if (!Number.isFinite(from) || from < this.#compactedAt) return send(410, gone(`too old resource version: ${from}`));
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    for (const change of c.history) {
      if (change.rv > from && matches(change.object, selector)) res.write(`${JSON.stringify(event(c, change))}\n`);
    }
    const w: OpenWatch = { path: u.pathname, selector, res };
    this.#watches.add(w);
    res.on('close', () => this.#watches.delete(w));
  }
}

function matches(o: KubeObject, selector: Selectors): boolean {
  const field = (name: string): string | undefined => (name === 'metadata.name' ? o.metadata.name : undefined);
  return selector.labels.every(([k, v]) => o.metadata.labels?.[k] === v) && selector.fields.every(([k, v]) => field(k) === v);
}

/** `k=v,k2=v2` as the API server reads it: `\,`, `\=` and `\\` escape those characters in a value. */
function terms(query: string | null): [string, string][] {
  const out: [string, string][] = [];
  for (const term of (query ?? '').split(/(?<!\\),/)) {
    if (term === '') continue;
    const eq = term.search(/(?<!\\)=/);
    out.push([term.slice(0, eq), term.slice(eq + 1).replace(/\\(.)/g, '$1')]);
  }
  return out;
}

function event(c: Collection, change: Collection['history'][number]): unknown {
  return { type: change.type, object: { kind: c.kind, apiVersion: c.apiVersion, ...change.object } };
}

function gone(message: string): unknown {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Expired', code: 410 };
}

/** A pod as the kubelet reports it: labels, phase, Ready condition, IP. */
export function pod(
  name: string,
  o: { labels?: Record<string, string>; ip?: string; phase?: string; ready?: boolean; deleting?: boolean } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'inference',
      labels: o.labels ?? { app: 'sglang' },
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { containers: [{ name: 'engine', image: 'lmsysorg/sglang' }] },
    status: {
      phase: o.phase ?? 'Running',
      ...(o.ip !== undefined ? { podIP: o.ip, podIPs: [{ ip: o.ip }] } : {}),
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: o.ready === false ? 'False' : 'True' },
      ],
    },
  };
}

/** An EndpointSlice of a Service: its ports, and endpoints by address with their ready condition. */
export function endpointSlice(
  name: string,
  service: string,
  ports: { name?: string; port: number }[],
  endpoints: { ip: string; ready?: boolean | null }[],
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: 'inference',
      labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
    },
    addressType: 'IPv4',
    ports: ports.map((p) => ({ name: p.name ?? '', protocol: 'TCP', port: p.port })),
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: e.ready === null ? {} : { ready: e.ready ?? true, serving: e.ready ?? true, terminating: false },
    })),
  };
}

/** An inference.networking.k8s.io/v1 InferencePool: the pods' labels, their port, and its endpoint picker. */
export function inferencePool(
  name: string,
  o: { matchLabels?: Record<string, string>; port?: number; targetPorts?: unknown; deleting?: boolean } = {},
): KubeObject {
  return {
    apiVersion: 'inference.networking.k8s.io/v1',
    kind: 'InferencePool',
    metadata: { name, namespace: 'inference', ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: {
      selector: { matchLabels: o.matchLabels ?? { app: 'vllm' } },
      targetPorts: o.targetPorts ?? [{ number: o.port ?? 8000 }],
      endpointPickerRef: { name: 'routerctl-epp', port: { number: 9002 }, failureMode: 'FailClose' },
    },
  };
}
