import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logging/logger.js';
import { KubeApiError } from './kube-api.js';
import type { KubeApi, KubeObject, WatchEvent } from './kube-api.js';

/** One collection watched: where, which of its objects, and what one object stands for. */
export interface WatchTarget<T> {
  readonly path: string;
  /** `labelSelector` and/or `fieldSelector`: the objects of the collection that are watched. */
  readonly query: Readonly<Record<string, string>>;
  /** What one object stands for: a pod's worker URLs, a pool's selector and port. */
  readonly read: (o: KubeObject) => T;
  /** In words, for the log: `pods app=sglang in namespace default`. */
  readonly description: string;
}

/** First pause after a failed list or watch, doubled up to `maxRetryMs`. */
export interface WatchRetry {
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
}

/**
 * A list, then a watch from its resourceVersion, of one collection (docs/http-edge.md
 * §Kubernetes discovery). A watch that ends or breaks is resumed from the last version
 * seen, and one whose version is gone (410) lists again. `objects` holds what each
 * object stands for, by name; `onChange` is called after each list and each event. A
 * list that fails leaves `objects` as they were and is logged once until one succeeds.
 */
export class CollectionWatch<T> {
  readonly objects = new Map<string, T>();
  readonly #abort = new AbortController();
  #resourceVersion: string | undefined;
  #started: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #lastFailure: string | undefined;

  constructor(
    private readonly api: KubeApi,
    readonly target: WatchTarget<T>,
    private readonly onChange: () => void,
    private readonly log: Logger,
    private readonly retry: WatchRetry = {},
  ) {}

  /** List once and tell (the fleet at start), then watch until stop(); settles after the list. */
  start(): Promise<void> {
    this.#started ??= (async () => {
      const listed = await this.#list();
      this.#loop = this.#run(listed);
    })();
    return this.#started;
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#started;
    await this.#loop;
  }

  /** List and replace `objects` with what it holds, or throw; tells no one (check-config --probe). */
  async listOrThrow(): Promise<void> {
    const t = this.target;
    const list = await this.api.list(t.path, t.query, this.#abort.signal);
    this.objects.clear();
    for (const item of list.items ?? []) {
      const name = item.metadata?.name;
      if (typeof name === 'string') this.objects.set(name, t.read(item));
    }
    this.#resourceVersion = list.metadata?.resourceVersion;
  }

  /** List, and tell; false (`objects` left alone) when the list fails. */
  async #list(): Promise<boolean> {
    try {
      await this.listOrThrow();
      if (this.#lastFailure !== undefined) this.log.info('Kubernetes discovery lists again', { watching: this.target.description });
      this.#lastFailure = undefined;
      this.onChange();
      return true;
    } catch (err) {
      if (this.#abort.signal.aborted) return false;
      this.#failed('list failed; the fleet stays as it is', err);
      return false;
    }
  }

  /** Watch from the last version; resume when the stream ends or breaks, list again when the version is gone. */
  async #run(listed: boolean): Promise<void> {
    const signal = this.#abort.signal;
    const t = this.target;
    let failures = listed ? 0 : 1;
    while (!signal.aborted) {
      if (failures > 0) {
        const base = this.retry.retryMs ?? 500;
        await sleep(Math.min(this.retry.maxRetryMs ?? 30_000, base * 2 ** (failures - 1)), undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
      }
      if (this.#resourceVersion === undefined) {
        failures = (await this.#list()) ? 0 : failures + 1;
        if (failures > 0) continue;
      }
      const startedAt = performance.now();
      let events = 0;
      try {
        const query = { ...t.query, resourceVersion: this.#resourceVersion ?? '' };
        await this.api.watch(t.path, query, (e) => void (events++, this.#event(e)), signal);
        // Ended by the server (its timeout): resume at once, unless it ends as soon as it starts.
        failures = events === 0 && performance.now() - startedAt < 1000 ? failures + 1 : 0;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof KubeApiError && err.code === 410) {
          this.log.info('Kubernetes discovery: the watched version is gone (410); listing again', { watching: t.description });
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
    if (e.type === 'DELETED') this.objects.delete(name);
    else this.objects.set(name, this.target.read(e.object));
    if (this.#lastFailure !== undefined) this.log.info('Kubernetes discovery watches again', { watching: this.target.description });
    this.#lastFailure = undefined;
    this.onChange();
  }

  #failed(what: string, err: unknown): void {
    const reason = (err as Error).message;
    if (reason !== this.#lastFailure) this.log.warn(`Kubernetes discovery: ${what}`, { watching: this.target.description, reason });
    this.#lastFailure = reason;
  }
}
