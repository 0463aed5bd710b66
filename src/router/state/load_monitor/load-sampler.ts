import { Agent, request } from 'undici';
import type { Worker } from '../../workers/worker.js';
import type { LoadTable } from './load-table.js';
import { isLegacyLoadShape, parseEngineMetrics, parseGetLoad, parseV1Loads } from './load-formats.js';
import type { LoadSource, Readings } from './load-formats.js';

const SOURCES: readonly LoadSource[] = ['v1_loads', 'get_load', 'metrics'];
const PATHS: Record<LoadSource, string> = { v1_loads: '/v1/loads?include=core', get_load: '/get_load', metrics: '/metrics' };
const MAX_LOAD_BODY = 4 * 1024 * 1024;

export interface SamplerOptions {
  intervalMs: number;
  timeoutMs: number;
  now: () => number;
  /** Called when a worker's load status changes (for logs): ok, or why not. */
  onStatus?: (worker: Worker, status: SampleStatus) => void;
}

export type SampleStatus = { ok: true; source: LoadSource } | { ok: false; reason: string };

interface WorkerPollState {
  source: number;
  busy: boolean;
  lastOk: boolean | undefined;
  lastReason: string | undefined;
}

/**
 * Polls every worker's load over HTTP: SGLang /v1/loads, else /get_load (array
 * shapes), else Prometheus /metrics (sglang: or vllm: names), remembering what
 * worked. Samples are stamped on arrival with the router's clock. A worker that
 * times out or answers garbage is marked unknown (never zero), and a hanging worker
 * is not polled again until its previous poll has ended, so it cannot pile up
 * sockets.
 */
export class LoadSampler {
  private readonly table: LoadTable;
  private readonly opts: SamplerOptions;
  private readonly agent = new Agent({ connections: 2, keepAliveTimeout: 10_000, pipelining: 1 });
  private readonly state = new Map<Worker, WorkerPollState>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(table: LoadTable, opts: SamplerOptions) {
    this.table = table;
    this.opts = opts;
  }

  add(worker: Worker): void {
    this.state.set(worker, { source: 0, busy: false, lastOk: undefined, lastReason: undefined });
  }

  remove(worker: Worker): void {
    this.state.delete(worker);
  }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      for (const w of this.state.keys()) void this.poll(w);
      this.timer = setTimeout(tick, this.opts.intervalMs);
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.agent.destroy();
  }

  /** Poll one worker now (also used by tests); resolves when the sample is applied. */
  async poll(worker: Worker): Promise<void> {
    const st = this.state.get(worker);
    if (!st || st.busy) return;
    st.busy = true;
    try {
      const result = await this.read(worker, st);
      if (!this.state.has(worker)) return;
      if (result.readings) {
        this.table.apply(worker, result.readings, this.opts.now());
        this.report(worker, st, { ok: true, source: SOURCES[st.source]! });
      } else {
        this.table.markUnknown(worker);
        this.report(worker, st, { ok: false, reason: result.reason });
      }
    } finally {
      st.busy = false;
    }
  }

  private async read(worker: Worker, st: WorkerPollState): Promise<{ readings?: Readings; reason: string }> {
    let reason = 'no load endpoint answered';
    // Start from the source that worked last; on a miss, walk the rest once.
    for (let attempt = 0; attempt < SOURCES.length; attempt++) {
      const idx = (st.source + attempt) % SOURCES.length;
      const source = SOURCES[idx]!;
      const r = await this.fetch(worker, PATHS[source]);
      if (r.kind === 'error') return { reason: r.reason }; // unreachable or hanging: do not try every path
      if (r.kind === 'status') {
        reason = `${PATHS[source]} answered ${r.status}`;
        continue;
      }
      const readings = parse(source, r.body);
      if (readings) {
        st.source = idx;
        return { readings, reason: '' };
      }
      reason = source === 'get_load' && isJsonLegacy(r.body) ? '/get_load has only the legacy {"load": N} shape' : `${PATHS[source]} answered an unreadable body`;
    }
    return { reason };
  }

  private async fetch(worker: Worker, path: string): Promise<{ kind: 'ok'; body: string } | { kind: 'status'; status: number } | { kind: 'error'; reason: string }> {
    try {
      const res = await request(worker.url + path, {
        dispatcher: this.agent,
        method: 'GET',
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return { kind: 'status', status: res.statusCode };
      }
      const len = Number(res.headers['content-length'] ?? 0);
      if (len > MAX_LOAD_BODY) {
        res.body.destroy();
        return { kind: 'error', reason: `${path} body too large` };
      }
      return { kind: 'ok', body: await res.body.text() };
    } catch (err) {
      const e = err as { code?: string; name?: string; message?: string };
      const why = e.name === 'TimeoutError' || e.code?.includes('TIMEOUT') ? `timed out after ${this.opts.timeoutMs} ms` : e.code ?? e.message ?? 'request failed';
      return { kind: 'error', reason: why };
    }
  }

  private report(worker: Worker, st: WorkerPollState, status: SampleStatus): void {
    const reason = status.ok ? undefined : status.reason;
    if (st.lastOk === status.ok && st.lastReason === reason) return;
    st.lastOk = status.ok;
    st.lastReason = reason;
    this.opts.onStatus?.(worker, status);
  }
}

function parse(source: LoadSource, body: string): Readings | undefined {
  if (source === 'metrics') return parseEngineMetrics(body);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  return source === 'v1_loads' ? parseV1Loads(json) : parseGetLoad(json);
}

function isJsonLegacy(body: string): boolean {
  try {
    return isLegacyLoadShape(JSON.parse(body));
  } catch {
    return false;
  }
}
