import { request } from 'undici';
import type { Dispatcher } from 'undici';
import type { AdminDecision } from '../contract/index.js';
import { ErrorCodes, RouterctlError } from '../errors/index.js';
import { snapshotFromAdmin } from './from-admin.js';
import { snapshotFromEngine } from './from-engine.js';
import { snapshotFromPrometheus } from './from-prometheus.js';
import { NotARouterMetricsError } from './router-metrics-page.js';
import { readyFromReadyz } from './readyz.js';
import { failureMessage, getText, headers, unauthorized, unreachable } from './http.js';
import { RateWindow } from './rates.js';
import { SseParser } from './sse.js';
import { StateAssembler } from './state-assembler.js';
import type { ReplicaSnapshot, ReplicaStatus, SourceChoice, SourceKind } from './view-model.js';

export interface ReplicaOptions {
  /** Normalised base URL of one router replica. */
  url: string;
  source: SourceChoice;
  token?: string | undefined;
  intervalMs: number;
  dispatcher: Dispatcher;
}

/**
 * Read one snapshot. `auto` asks the admin API first and falls back to /metrics when
 * the router has none (the Rust sgl-router answers 404), but not when the admin API
 * refuses the token: a wrong token is the operator's to fix, and hiding it behind a
 * poorer Prometheus view would leave them wondering where the queues went.
 */
export async function fetchSnapshot(o: ReplicaOptions, signal?: AbortSignal): Promise<ReplicaSnapshot> {
  const timeoutMs = Math.max(2000, Math.min(10_000, o.intervalMs * 3));
  const common = { dispatcher: o.dispatcher, token: o.token, timeoutMs, ...(signal ? { signal } : {}) };
  if (o.source === 'engine') return snapshotFromEngine(o.url, { dispatcher: o.dispatcher, timeoutMs });
  let adminStatus: number | undefined;
  if (o.source !== 'prometheus') {
    const res = await getText(`${o.url}/admin/state`, common);
    if (res.status === 401 || res.status === 403) throw unauthorized(o.url, Boolean(o.token));
    adminStatus = res.status;
    if (res.status === 200) {
      const snap = snapshotFromAdmin(parseJson(res.text));
      if (snap) return snap;
    }
    if (o.source === 'admin') {
      throw new RouterctlError(
        ErrorCodes.NOT_A_ROUTER,
        `${o.url} has no routerctl admin API (GET /admin/state answered ${res.status === 200 ? 'something else' : `HTTP ${res.status}`}); try --source prometheus`,
      );
    }
  }
  const res = await getText(`${o.url}/metrics`, common);
  if (res.status !== 200) {
    const tried = adminStatus === undefined ? '' : `/admin/state answered HTTP ${adminStatus}, `;
    // The Shepherd Model Gateway and the vLLM router serve Prometheus on a port of their own.
    const elsewhere =
      res.status === 404 ? '; a router with a --prometheus-port (SMG, the vLLM router: 29000 by default) is read there' : '';
    throw new RouterctlError(
      ErrorCodes.NOT_A_ROUTER,
      `${o.url} does not look like a router: ${tried}/metrics answered HTTP ${res.status}${elsewhere}`,
    );
  }
  let snap: ReplicaSnapshot;
  try {
    snap = snapshotFromPrometheus(res.text);
  } catch (err) {
    if (err instanceof NotARouterMetricsError) throw new RouterctlError(ErrorCodes.NOT_A_ROUTER, `${o.url}: ${err.message}`);
    throw err;
  }
  // /metrics cannot say that a router drains; its /readyz can.
  snap.router.ready = await readyFromReadyz(o.url, common);
  return snap;
}

/**
 * A live connection to one replica: the admin event stream when the router has one
 * (one state per `intervalMs`, pushed), else polling /admin/state or /metrics. It
 * never gives up: on failure the status turns not-live with the cause, the last
 * snapshot is kept, and it reconnects with backoff (re-detecting the source under
 * `auto`, since a restarted router may be a different one).
 */
export class ReplicaClient {
  private status: ReplicaStatus;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private source: SourceKind | null;

  constructor(
    private readonly o: ReplicaOptions,
    private readonly onUpdate: (s: ReplicaStatus) => void,
    initial?: ReplicaSnapshot,
    /** Why the first read got no answer, for a replica that starts down. */
    initialError?: string,
  ) {
    this.source = initial?.source ?? (o.source === 'auto' ? null : o.source);
    this.status = {
      url: o.url,
      source: this.source,
      live: initial !== undefined,
      error: initial === undefined ? (initialError ?? null) : null,
      snapshot: initial ?? null,
      rates: null,
      receivedAt: initial ? Date.now() : null,
    };
  }

  get current(): ReplicaStatus {
    return this.status;
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running?.catch(() => undefined);
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private accept(snap: ReplicaSnapshot): void {
    this.source = snap.source;
    const rates = this.#window.push(snap);
    this.status = {
      url: this.o.url,
      source: snap.source,
      live: true,
      error: null,
      snapshot: snap,
      rates,
      receivedAt: Date.now(),
      ...(this.#decisions.length > 0 ? { decisions: this.#decisions } : {}),
    };
    this.onUpdate(this.status);
  }

  readonly #window = new RateWindow();
  /** The latest decision records the stream carried, oldest first. */
  #decisions: AdminDecision[] = [];

  private acceptDecisions(records: unknown): void {
    if (!Array.isArray(records)) return;
    const fresh = records.filter(
      (r): r is AdminDecision =>
        typeof r === 'object' &&
        r !== null &&
        typeof (r as AdminDecision).worker === 'string' &&
        typeof (r as AdminDecision).seq === 'number',
    );
    if (fresh.length === 0) return;
    this.#decisions = [...this.#decisions, ...fresh].slice(-RECENT_DECISIONS);
    this.status = { ...this.status, decisions: this.#decisions };
    this.onUpdate(this.status);
  }

  private fail(err: unknown): void {
    const message = failureMessage(err);
    if (this.status.live || this.status.error !== message) {
      this.status = { ...this.status, live: false, error: message, rates: null };
      this.onUpdate(this.status);
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (this.source === null || (this.o.source === 'auto' && failures > 0)) {
          this.accept(await fetchSnapshot(this.o, this.abort.signal));
        }
        if (this.source === 'admin') await this.streamAdmin(() => (failures = 0));
        else await this.pollMetrics(() => (failures = 0));
        // A stream that ends cleanly means the router closed it (shutdown, restart).
        if (!this.stopped) throw new Error('the router closed the event stream');
      } catch (err) {
        if (this.stopped) return;
        failures++;
        this.fail(err);
        await sleep(Math.min(5000, 250 * 2 ** Math.min(failures, 5)), this.abort.signal);
      }
    }
  }

  private async streamAdmin(onOk: () => void): Promise<void> {
    // decisions=1: the router's decision records ride along; delta=1: after the first
    // whole state, only what changed (docs/metrics-and-admin.md §Stream deltas). A
    // router without either ignores it and sends whole states.
    const url = `${this.o.url}/admin/stream?interval_ms=${this.o.intervalMs}&decisions=1&delta=1`;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'GET',
        dispatcher: this.o.dispatcher,
        headers: { ...headers(this.o.token), accept: 'text/event-stream' },
        signal: this.abort.signal,
        headersTimeout: 5000,
        // A stream that stays silent for several intervals is dead even if the socket is not.
        bodyTimeout: Math.max(5000, this.o.intervalMs * 5),
      });
    } catch (err) {
      throw unreachable(url, err);
    }
    if (res.statusCode === 401 || res.statusCode === 403) {
      await res.body.dump();
      throw unauthorized(this.o.url, Boolean(this.o.token));
    }
    if (res.statusCode === 404) {
      // A router with /admin/state but no stream: poll the state instead.
      await res.body.dump();
      await this.pollAdminState(onOk);
      return;
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`/admin/stream answered HTTP ${res.statusCode}`);
    }
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const assembler = new StateAssembler();
    try {
      for await (const chunk of res.body) {
        for (const ev of parser.push(decoder.decode(chunk as Buffer, { stream: true }))) {
          if (ev.event === 'decisions') {
            this.acceptDecisions(parseJson(ev.data));
            continue;
          }
          if (ev.event !== 'state' && ev.event !== 'state_delta') continue;
          const doc = ev.event === 'state' ? assembler.whole(parseJson(ev.data)) : assembler.delta(parseJson(ev.data));
          const snap = snapshotFromAdmin(doc);
          if (!snap) throw new Error('the event stream carried something other than admin state');
          if (assembler.behind > 0) snap.behind = assembler.behind;
          onOk();
          this.accept(snap);
        }
      }
    } catch (err) {
      if (this.stopped) return;
      throw unreachable(url, err);
    }
  }

  private async pollAdminState(onOk: () => void): Promise<void> {
    while (!this.stopped) {
      const snap = await fetchSnapshot({ ...this.o, source: 'admin' }, this.abort.signal);
      onOk();
      this.accept(snap);
      await sleep(this.o.intervalMs, this.abort.signal);
    }
  }

  private async pollMetrics(onOk: () => void): Promise<void> {
    while (!this.stopped) {
      const snap = await fetchSnapshot({ ...this.o, source: this.source === 'engine' ? 'engine' : 'prometheus' }, this.abort.signal);
      onOk();
      this.accept(snap);
      await sleep(this.o.intervalMs, this.abort.signal);
    }
  }
}

/** Decision records kept per replica for the console's drill-down. */
const RECENT_DECISIONS = 200;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
