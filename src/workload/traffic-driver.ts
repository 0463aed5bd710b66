import { Agent } from 'undici';
import { ArrivalDigest } from './arrival-digest.js';
import { chatExchange } from './chat-exchange.js';
import type { Message } from './chat-exchange.js';
import type { Arrival, Workload } from './workload.js';

/** What one request saw, from the client's side. */
export interface RequestResult {
  seq: number;
  session: number;
  family: number;
  turn: number;
  /** HTTP status, or 0 when the request never got one (refused, timed out, cut at the end). */
  status: number;
  error: string | undefined;
  /** performance.now() when the request was sent. */
  startedAt: number;
  /** When the workload asked for it, seconds from the start of the run. */
  scheduledAt: number;
  /** How long it waited for the session's previous turn before it could be sent. */
  heldMs: number;
  ttftMs: number | undefined;
  latencyMs: number;
  /** Gaps between streamed content chunks. */
  itlMs: number[];
  promptTokens: number | undefined;
  cachedTokens: number | undefined;
  completionTokens: number | undefined;
}

export interface DriverOptions {
  url: string;
  model?: string;
  /** Requests beyond this many in flight are not sent (counted as shed), so a stalled router cannot exhaust the client. */
  maxInFlight?: number;
  /** Per-request limit; a request running longer is aborted and reported as `timeout`. */
  requestTimeoutMs?: number;
  /** Dispatch only arrivals before this many seconds; unbounded when omitted. */
  horizonS?: number;
  onResult?: (r: RequestResult) => void;
}

/** Live counts, for a progress line. */
export interface DriverCounts {
  dispatched: number;
  sent: number;
  finished: number;
  ok: number;
  failed: number;
  inflight: number;
  shed: number;
  /** Arrivals that had to wait for their session's previous turn. */
  held: number;
  /** Arrivals still waiting for their session's previous turn. */
  waiting: number;
  /** Held arrivals dropped unsent because the run ended first. */
  unsent: number;
}

interface SessionState {
  history: Message[];
  busy: boolean;
  queue: Array<{ arrival: Arrival; dueAt: number }>;
}

/**
 * Plays a Workload against an OpenAI-compatible endpoint in real time. Every request
 * streams (with usage); a session's turns go out in order, each after the previous
 * reply, carrying the conversation so far, so later turns share a growing prefix as
 * a real chat does. A turn whose arrival comes while the previous one is still
 * running is held until it finishes (and counted as held). Stopping aborts what is in
 * flight and reports it.
 */
export class TrafficDriver {
  readonly digest = new ArrivalDigest();
  private readonly workload: Workload;
  private readonly url: string;
  private readonly model: string | undefined;
  private readonly maxInFlight: number;
  private readonly requestTimeoutMs: number;
  private horizonS: number;
  private readonly onResult: ((r: RequestResult) => void) | undefined;
  private readonly agent: Agent;
  private readonly sessions = new Map<number, SessionState>();
  private readonly inflight = new Set<AbortController>();
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private t0 = 0;
  private nextArrival: Arrival | undefined;
  private dispatchDone: () => void = () => {};
  private stopRequested: () => void = () => {};
  private readonly stopped: Promise<void>;
  private stopping: Promise<void> | undefined;
  /** Resolves once every arrival before the horizon has been dispatched (sent, held or shed). */
  readonly dispatched: Promise<void>;
  private readonly c: Omit<DriverCounts, 'inflight' | 'waiting'> = {
    dispatched: 0,
    sent: 0,
    finished: 0,
    ok: 0,
    failed: 0,
    shed: 0,
    held: 0,
    unsent: 0,
  };

  constructor(workload: Workload, opts: DriverOptions) {
    this.workload = workload;
    this.url = opts.url.replace(/\/+$/, '');
    this.model = opts.model;
    this.maxInFlight = opts.maxInFlight ?? 1024;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 120_000;
    this.horizonS = opts.horizonS ?? Infinity;
    this.onResult = opts.onResult;
    // One connection per request in flight: a pool smaller than that would queue requests inside the client and inflate TTFT.
    this.agent = new Agent({ connections: this.maxInFlight, keepAliveTimeout: 10_000 });
    this.dispatched = new Promise((resolve) => (this.dispatchDone = resolve));
    this.stopped = new Promise((resolve) => (this.stopRequested = resolve));
  }

  /** performance.now() at which arrival time 0 fell. */
  get startedAt(): number {
    return this.t0;
  }

  get shed(): number {
    return this.c.shed;
  }

  get sent(): number {
    return this.c.sent;
  }

  counts(): DriverCounts {
    let waiting = 0;
    for (const s of this.sessions.values()) waiting += s.queue.length;
    return { ...this.c, inflight: this.inflight.size, waiting };
  }

  start(): void {
    this.running = true;
    this.t0 = performance.now();
    this.nextArrival = this.workload.next();
    this.schedule();
  }

  /**
   * Dispatch every arrival before `durationMs`, then give what is still running (or
   * held behind a running turn) up to `graceMs` to finish, then abort the rest as
   * `cut_at_end`. Resolves within about durationMs + graceMs whatever the server does.
   */
  async runFor(durationMs: number, graceMs: number): Promise<void> {
    if (this.horizonS === Infinity) this.horizonS = durationMs / 1000;
    this.start();
    let timer: NodeJS.Timeout | undefined;
    const elapsed = new Promise((r) => (timer = setTimeout(r, Math.max(0, this.t0 + durationMs - performance.now()))));
    await Promise.race([Promise.all([this.dispatched, elapsed]), this.stopped]);
    clearTimeout(timer);
    if (this.running) await Promise.race([this.settle(graceMs), this.stopped]);
    await this.stop();
  }

  /** Abort everything in flight (reported as `cut_at_end`), drop held turns, and close connections. */
  stop(): Promise<void> {
    return (this.stopping ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    this.running = false;
    this.stopRequested();
    if (this.timer) clearTimeout(this.timer);
    this.dispatchDone();
    for (const s of this.sessions.values()) {
      this.c.unsent += s.queue.length;
      s.queue.length = 0;
    }
    for (const a of this.inflight) a.abort('cut_at_end');
    await Promise.all([...this.pending]);
    await this.agent.close().catch(() => this.agent.destroy());
  }

  private settle(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const deadline = setTimeout(done, graceMs);
      const poll = setInterval(() => {
        if (this.inflight.size === 0 && this.pending.size === 0) done();
      }, 20);
      void this.stopped.then(done);
      function done(): void {
        clearTimeout(deadline);
        clearInterval(poll);
        resolve();
      }
    });
  }

  private schedule(): void {
    this.timer = undefined;
    if (!this.running) return;
    const now = performance.now();
    // Send everything that is due: timers fire late under load, and the arrival process must stay honest.
    let sentNow = 0;
    while (this.nextArrival && this.nextArrival.at < this.horizonS && this.t0 + this.nextArrival.at * 1000 <= now && sentNow < 1000) {
      this.dispatch(this.nextArrival);
      this.nextArrival = this.workload.next();
      sentNow++;
    }
    if (!this.nextArrival || this.nextArrival.at >= this.horizonS) {
      this.dispatchDone();
      return;
    }
    const delay = this.t0 + this.nextArrival.at * 1000 - performance.now();
    this.timer = setTimeout(() => this.schedule(), Math.max(0, Math.min(delay, 1000)));
  }

  private dispatch(a: Arrival): void {
    this.c.dispatched++;
    this.digest.add(a);
    let s = this.sessions.get(a.session);
    if (!s) {
      s = { history: [{ role: 'system', content: this.workload.systemPrompts[a.family]! }], busy: false, queue: [] };
      this.sessions.set(a.session, s);
    }
    if (s.busy) {
      this.c.held++;
      s.queue.push({ arrival: a, dueAt: this.t0 + a.at * 1000 });
      return;
    }
    this.send(s, a, this.t0 + a.at * 1000);
  }

  private send(s: SessionState, a: Arrival, dueAt: number): void {
    if (this.inflight.size >= this.maxInFlight) {
      this.c.shed++;
      this.afterTurn(s, a);
      return;
    }
    this.c.sent++;
    s.busy = true;
    const abort = new AbortController();
    this.inflight.add(abort);
    const timeout = setTimeout(() => abort.abort('timeout'), this.requestTimeoutMs);
    const startedAt = performance.now();
    const p = chatExchange({
      url: this.url,
      dispatcher: this.agent,
      model: this.model,
      messages: [...s.history, { role: 'user', content: a.userMessage }],
      maxTokens: a.maxTokens,
      signal: abort.signal,
    }).then((o) => {
      clearTimeout(timeout);
      this.inflight.delete(abort);
      this.c.finished++;
      if (o.status === 200 && o.error === undefined) this.c.ok++;
      else this.c.failed++;
      // Only a completed exchange enters the history: a client shows the user no half reply.
      if (o.reply !== undefined) s.history.push({ role: 'user', content: a.userMessage }, { role: 'assistant', content: o.reply });
      this.onResult?.({
        seq: a.seq,
        session: a.session,
        family: a.family,
        turn: a.turn,
        status: o.status,
        error: o.error,
        startedAt,
        scheduledAt: a.at,
        heldMs: Math.max(0, startedAt - dueAt),
        ttftMs: o.ttftMs,
        latencyMs: o.latencyMs,
        itlMs: o.itlMs,
        promptTokens: o.promptTokens,
        cachedTokens: o.cachedTokens,
        completionTokens: o.completionTokens,
      });
      s.busy = false;
      this.afterTurn(s, a);
    });
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** The turn is over: send the session's next held turn, or forget a finished session. */
  private afterTurn(s: SessionState, a: Arrival): void {
    const next = s.queue.shift();
    if (next) {
      if (this.running) {
        this.send(s, next.arrival, next.dueAt);
        return;
      }
      this.c.unsent += s.queue.length + 1;
      s.queue.length = 0;
      return;
    }
    if (a.last) this.sessions.delete(a.session);
  }
}
