import { Agent, request } from 'undici';
import type { KubeCredentials } from './kube-credentials.js';

/** One line of a watch stream (newline-delimited JSON): what changed, and the object as it is now. */
export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: KubeObject;
}

/** The fields of a Kubernetes object (or a Status, in an ERROR event) discovery reads. */
export interface KubeObject {
  readonly kind?: string;
  readonly code?: number;
  readonly message?: string;
  readonly metadata?: { readonly name?: string; readonly resourceVersion?: string; readonly [k: string]: unknown };
  readonly [field: string]: unknown;
}

export interface KubeList {
  readonly metadata?: { readonly resourceVersion?: string };
  readonly items?: readonly KubeObject[];
}

/** The API server answered with an error status (or an ERROR event): `code` 410 means the resourceVersion is gone. */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** How long the server keeps one watch open before it ends it; resumed from the last resourceVersion. */
const WATCH_TIMEOUT_SECS = 300;

/**
 * The two calls discovery makes, over undici 7: a list, and a watch read as
 * newline-delimited JSON events (docs/http-edge.md §Kubernetes discovery). Not
 * @kubernetes/client-node: its 2.x wants undici 8 and so Node ≥ 22.19, and this
 * project runs on Node 20.
 */
export class KubeApi {
  readonly #agent: Agent;

  constructor(
    private readonly creds: KubeCredentials,
    private readonly requestTimeoutMs: number,
  ) {
    this.#agent = new Agent({
      connect: { ...(creds.ca !== null ? { ca: creds.ca } : {}), rejectUnauthorized: !creds.insecureSkipTlsVerify },
    });
  }

  /** GET a collection, now. */
  async list(path: string, query: Record<string, string>, signal?: AbortSignal): Promise<KubeList> {
    const res = await request(this.#url(path, query), {
      dispatcher: this.#agent,
      headers: await this.#headers(),
      headersTimeout: this.requestTimeoutMs,
      bodyTimeout: this.requestTimeoutMs,
      signal,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new KubeApiError(res.statusCode, `list ${path}: HTTP ${res.statusCode} ${statusMessage(text)}`);
    return JSON.parse(text) as KubeList;
  }

  /**
   * Watch a collection from `resourceVersion`, calling `onEvent` for each event in
   * order, until the server ends the stream (resolves) or it breaks (rejects). An
   * ERROR event rejects with its Status code; 410 says the version is gone.
   */
  async watch(path: string, query: Record<string, string>, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const res = await request(
      this.#url(path, { ...query, watch: '1', allowWatchBookmarks: 'true', timeoutSeconds: String(WATCH_TIMEOUT_SECS) }),
      {
        dispatcher: this.#agent,
        headers: await this.#headers(),
        headersTimeout: this.requestTimeoutMs,
        // A watch is quiet for long; bookmarks arrive about every minute, so a silent one past its timeout is a dead connection.
        bodyTimeout: (WATCH_TIMEOUT_SECS + 60) * 1000,
        signal,
      },
    );
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => '');
      throw new KubeApiError(res.statusCode, `watch ${path}: HTTP ${res.statusCode} ${statusMessage(text)}`);
    }
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of res.body) {
      pending += decoder.decode(chunk as Buffer, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (line === '') continue;
        const event = JSON.parse(line) as WatchEvent;
        if (event.type === 'ERROR') {
          res.body.destroy();
          throw new KubeApiError(event.object.code ?? 500, `watch ${path}: ${event.object.message ?? 'ERROR event'}`);
        }
        onEvent(event);
      }
    }
  }

  async close(): Promise<void> {
    await this.#agent.close().catch(() => undefined);
  }

  async #headers(): Promise<Record<string, string>> {
    const token = await this.creds.token();
    return { accept: 'application/json', ...(token !== null ? { authorization: `Bearer ${token}` } : {}) };
  }

  #url(path: string, query: Record<string, string>): string {
    const q = new URLSearchParams(query).toString();
    return `${this.creds.server}${path}${q === '' ? '' : `?${q}`}`;
  }
}

/** A Status body's message, else the text itself, kept short. */
function statusMessage(text: string): string {
  try {
    const status = JSON.parse(text) as { message?: unknown };
    if (typeof status.message === 'string') return status.message;
  } catch {
    // not JSON: the text says what it says
  }
  return text.slice(0, 200);
}
