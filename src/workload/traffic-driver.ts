import { Agent, request } from 'undici';
import type { Arrival, Workload } from './workload.js';

/** What one request saw, from the client's side. */
export interface RequestResult {
  seq: number;
  session: number;
  family: number;
  turn: number;
  /** HTTP status, or 0 when the request never got one (refused, timed out, cancelled). */
  status: number;
  error: string | undefined;
  startedAt: number;
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
  /** Per-request limit; a request running longer is aborted and reported. */
  requestTimeoutMs?: number;
  onResult?: (r: RequestResult) => void;
  /** Arrival-time origin; performance.now() at start by default. */
  now?: () => number;
}

type Message = { role: string; content: string };

/**
 * Plays a Workload against an OpenAI-compatible endpoint in real time: every request
 * streams (with usage), sessions carry their history forward, and results are
 * reported as they finish. Stopping aborts what is in flight.
 */
export class TrafficDriver {
  private readonly opts: Required<Omit<DriverOptions, 'model' | 'onResult' | 'now'>> & Pick<DriverOptions, 'model' | 'onResult'>;
  private readonly workload: Workload;
  private readonly agent = new Agent({ connections: 256, keepAliveTimeout: 10_000 });
  private readonly histories = new Map<number, Message[]>();
  private readonly inflight = new Set<AbortController>();
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private t0 = 0;
  private nextArrival: Arrival | undefined;
  shed = 0;
  sent = 0;

  constructor(workload: Workload, opts: DriverOptions) {
    this.workload = workload;
    this.opts = { maxInFlight: 1024, requestTimeoutMs: 120_000, ...opts };
  }

  start(): void {
    this.running = true;
    this.t0 = performance.now();
    this.nextArrival = this.workload.next();
    this.schedule();
  }

  /** Run until `durationMs` has passed (arrivals stop then), and wait for what is in flight up to `graceMs`. */
  async runFor(durationMs: number, graceMs: number): Promise<void> {
    this.start();
    await new Promise((r) => setTimeout(r, durationMs));
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    const all = Promise.all([...this.pending]);
    const grace = new Promise((r) => setTimeout(r, graceMs));
    await Promise.race([all, grace]);
    await this.stop();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    for (const a of this.inflight) a.abort();
    await Promise.all([...this.pending]);
    await this.agent.close().catch(() => this.agent.destroy());
  }

  private schedule(): void {
    if (!this.running || !this.nextArrival) return;
    const due = this.t0 + this.nextArrival.at * 1000;
    const delay = due - performance.now();
    if (delay > 1) {
      this.timer = setTimeout(() => this.schedule(), Math.min(delay, 1000));
      return;
    }
    // Send everything that is due (timers fire late under load; keep the arrival process honest).
    let sentNow = 0;
    while (this.nextArrival && this.t0 + this.nextArrival.at * 1000 <= performance.now() && sentNow < 1000) {
      this.send(this.nextArrival);
      this.nextArrival = this.workload.next();
      sentNow++;
    }
    this.timer = setTimeout(() => this.schedule(), 0);
  }

  private send(a: Arrival): void {
    if (this.inflight.size >= this.opts.maxInFlight) {
      this.shed++;
      return;
    }
    this.sent++;
    const history = this.histories.get(a.session) ?? [{ role: 'system', content: this.workload.systemPrompts[a.family]! }];
    const messages = [...history, { role: 'user', content: a.userMessage }];
    const p = this.exchange(a, messages).then((r) => {
      if (r.reply !== undefined) {
        history.push({ role: 'user', content: a.userMessage }, { role: 'assistant', content: r.reply });
        this.histories.set(a.session, history);
      }
      this.opts.onResult?.(r.result);
    });
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private async exchange(a: Arrival, messages: Message[]): Promise<{ result: RequestResult; reply: string | undefined }> {
    const abort = new AbortController();
    this.inflight.add(abort);
    const timeout = setTimeout(() => abort.abort(new Error('client timeout')), this.opts.requestTimeoutMs);
    const started = performance.now();
    const result: RequestResult = {
      seq: a.seq,
      session: a.session,
      family: a.family,
      turn: a.turn,
      status: 0,
      error: undefined,
      startedAt: started,
      ttftMs: undefined,
      latencyMs: 0,
      itlMs: [],
      promptTokens: undefined,
      cachedTokens: undefined,
      completionTokens: undefined,
    };
    let reply: string | undefined;
    try {
      const res = await request(`${this.opts.url}/v1/chat/completions`, {
        dispatcher: this.agent,
        method: 'POST',
        signal: abort.signal,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...(this.opts.model ? { model: this.opts.model } : {}),
          messages,
          max_tokens: a.maxTokens,
          ignore_eos: true,
          stream: true,
          stream_options: { include_usage: true },
        }),
      });
      result.status = res.statusCode;
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        result.error = errorCode(text) ?? `http_${res.statusCode}`;
      } else {
        let buffer = '';
        let content = '';
        let last = 0;
        for await (const chunk of res.body) {
          buffer += (chunk as Buffer).toString('utf8');
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            if (!event.startsWith('data: ')) continue;
            const data = event.slice(6);
            if (data === '[DONE]') continue;
            const msg = JSON.parse(data) as {
              choices?: Array<{ delta?: { content?: string } }>;
              usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
              error?: { code?: string };
            };
            if (msg.error) result.error = msg.error.code ?? 'stream_error';
            const delta = msg.choices?.[0]?.delta?.content;
            if (delta) {
              const t = performance.now();
              if (result.ttftMs === undefined) result.ttftMs = t - started;
              else result.itlMs.push(t - last);
              last = t;
              content += delta;
            }
            if (msg.usage) {
              result.promptTokens = msg.usage.prompt_tokens;
              result.completionTokens = msg.usage.completion_tokens;
              result.cachedTokens = msg.usage.prompt_tokens_details?.cached_tokens;
            }
          }
        }
        if (!result.error) reply = content;
      }
    } catch (err) {
      result.error = abort.signal.aborted ? 'timeout_or_cancelled' : (err as { code?: string }).code ?? 'request_failed';
    } finally {
      clearTimeout(timeout);
      this.inflight.delete(abort);
      result.latencyMs = performance.now() - started;
    }
    return { result, reply };
  }
}

function errorCode(body: string): string | undefined {
  try {
    const j = JSON.parse(body) as { error?: { code?: unknown } };
    return typeof j.error?.code === 'string' ? j.error.code : undefined;
  } catch {
    return undefined;
  }
}
