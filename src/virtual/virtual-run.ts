import type { RouterConfig } from '../config/index.js';
import type { RankReading } from '../engines/index.js';
import { renderChat, tokenize } from '../prefix/index.js';
import { textKey } from '../router/index.js';
import type { CacheAwareDecision } from '../router/index.js';
import type { EngineParams, Flavor } from '../sim/index.js';
import type { PrefillEstimate } from '../router/index.js';
import { VirtualFleet } from './virtual-fleet.js';
import { countRefusal, emptyRefusalCounts } from './refusal-counts.js';
import type { RefusalCounts } from './refusal-counts.js';
import { Workload } from '../workload/index.js';
import type { Arrival, WorkloadOptions } from '../workload/index.js';

export const VIRTUAL_DECISIONS = ['cache_hit', 'cache_miss', 'cache_worker_queued', 'all_queued'] as const;

/** Decisions booked in one slice of simulated time. */
export interface DecisionWindow {
  /** Start of the window, simulated seconds from the run's start. */
  startS: number;
  decisions: Record<CacheAwareDecision, number>;
  /** Requests the policy could not place. */
  failures: number;
  /** The longest waiting queue any engine reported at a sample in this window. */
  maxWaiting: number;
  /** End-to-end latency of each request that finished in this window, simulated ms (what the console's window shows). */
  e2eMs: number[];
}

export interface VirtualRunOptions {
  /** The router's configuration: policy, gate, freshness, poll interval, block size, index bound. */
  config: RouterConfig;
  workers: number;
  engine?: Partial<EngineParams>;
  /** Per engine, over `engine` (VirtualFleetOptions.engines). */
  engines?: ReadonlyArray<Partial<EngineParams> | undefined>;
  flavor?: Flavor;
  workload: Partial<WorkloadOptions>;
  /** Arrivals are generated for this long; requests still running at the end are counted as unfinished. */
  durationS: number;
  /** Width of a decision window (default 10 s). */
  windowS?: number;
  seed: number;
  /** Called after each round of load polls with what each engine reported, summed over its ranks (undefined: no reading). */
  onSample?: (atMs: number, loads: ReadonlyArray<RankReading | undefined>) => void;
}

export interface VirtualRunResult {
  windows: DecisionWindow[];
  decisions: Record<CacheAwareDecision, number>;
  sent: number;
  finished: number;
  /** Requests an engine refused (queue full, too long). */
  refused: number;
  /** The refusals by the engine's reason; they add up to `refused`, but for injected failures. */
  refusedBy: RefusalCounts;
  failures: number;
  /** Time to first token of every finished request, simulated ms. */
  ttftMs: number[];
  /**
   * Why cache_miss was booked: no owner was a usable candidate (`noCandidate`: a tree
   * miss, or no owner cleared the cache gate), or capacity emptied the candidates.
   */
  misses: { noCandidate: number; capacity: number };
  /** Prompt tokens the engines were sent, and how many of them their prefix caches held. */
  promptTokens: number;
  cachedTokens: number;
  /** Each engine's prefill rate as the router learnt it over the run (docs/routing.md §Learned prefill rate), by engine. */
  learnedPrefill: Array<PrefillEstimate | null>;
}

/**
 * A conversation as the client holds it. Rather than the message list, it keeps what
 * every consumer derives from it, grown turn by turn: the rendered history (the
 * chat template's text for the messages so far, without the generation prompt) and
 * its tokens. Every rendered message starts with `<|`, which no token spans, so the
 * tokens of a concatenation are the concatenation of the tokens.
 */
interface Session {
  rendered: string;
  tokens: number[];
  busy: boolean;
  held: Arrival[];
}

/** The chat template's rendering of one message (src/prefix/chat-template.ts). */
const renderMessage = (role: string, content: string): string => renderChat([{ role, content }]).slice(0, -'<|assistant|>\n'.length);
const GENERATION_PROMPT = '<|assistant|>\n';

/**
 * A routed fleet on simulated time: the simulated engines, the load sampling (at the
 * configured interval, through the same /v1/loads reader as over HTTP, so freshness
 * and staleness are modelled) and the router's own policy, load table and prefix
 * index, all on one ManualClock. No sockets, no sleeping: a 2-minute run takes a
 * second or so, and the same seed gives the same decisions.
 *
 * The client side follows the traffic driver (src/workload/traffic-driver.ts): a
 * session's next turn waits for the previous reply, and only completed replies
 * enter the conversation history.
 */
export function runVirtual(opts: VirtualRunOptions): VirtualRunResult {
  const c = opts.config;
  // The run's options are the fleet's, and more.
  const fleet = new VirtualFleet(opts);
  const { clock, engines, workers, table, index, prefix, policy, random } = fleet;

  const windowMs = (opts.windowS ?? 10) * 1000;
  const windows: DecisionWindow[] = [];
  const windowAt = (t: number): DecisionWindow => {
    const i = Math.floor(t / windowMs);
    while (windows.length <= i) {
      windows.push({ startS: (windows.length * windowMs) / 1000, decisions: zeroDecisions(), failures: 0, maxWaiting: 0, e2eMs: [] });
    }
    return windows[i]!;
  };
  const result: VirtualRunResult = {
    windows,
    decisions: zeroDecisions(),
    sent: 0,
    finished: 0,
    refused: 0,
    refusedBy: emptyRefusalCounts(),
    failures: 0,
    ttftMs: [],
    misses: { noCandidate: 0, capacity: 0 },
    promptTokens: 0,
    cachedTokens: 0,
    learnedPrefill: [],
  };
  const endMs = opts.durationS * 1000;

  // Load sampling: each poll reads what the engine's /v1/loads would say now.
  let loads: Array<RankReading | undefined> = [];
  fleet.startSampling(
    endMs,
    (now, i, readings) => {
      const win = windowAt(now);
      for (const [, r] of readings) {
        win.maxWaiting = Math.max(win.maxWaiting, r.waiting);
        const sum = (loads[i] ??= { running: 0, waiting: 0 });
        sum.running += r.running;
        sum.waiting += r.waiting;
        sum.usedTokens = (sum.usedTokens ?? 0) + (r.usedTokens ?? 0);
        sum.maxTotalTokens = (sum.maxTotalTokens ?? 0) + (r.maxTotalTokens ?? 0);
        sum.totalTokens = (sum.totalTokens ?? 0) + (r.totalTokens ?? 0);
        sum.waitingUncachedTokens = (sum.waitingUncachedTokens ?? 0) + (r.waitingUncachedTokens ?? 0);
      }
    },
    (now) => {
      windowAt(now);
      opts.onSample?.(now, loads);
      loads = [];
    },
  );

  const workload = new Workload({ ...opts.workload, seed: opts.seed });
  const sessions = new Map<number, Session>();

  const send = (s: Session, a: Arrival): void => {
    const now = clock.now();
    const user = renderMessage('user', a.userMessage);
    const tail = user + GENERATION_PROMPT;
    const text = s.rendered + tail;
    // The router's key for a chat request: its rendered prompt as text.
    const { prefixHashes, inputTokens } = textKey(text, c.blockSize);
    const view = table.view(now);
    const hints = policy.usesPrefix ? new Int32Array(prefixHashes.length) : undefined;
    const signal = policy.usesPrefix ? prefix.signal(prefixHashes, hints) : undefined;
    const outcome = policy.select({ pool: view, load: view, inputTokens, prefix: signal, random });
    const win = windowAt(now);
    if (!outcome.ok) {
      win.failures++;
      result.failures++;
      afterTurn(s, a);
      return;
    }
    const decision = outcome.cacheAware?.decision;
    if (decision) {
      win.decisions[decision]++;
      result.decisions[decision]++;
      if (decision === 'cache_miss') {
        if (outcome.cacheAware?.resolution) result.misses.capacity++;
        else result.misses.noCandidate++;
      }
    }
    const slot = outcome.worker.slot;
    const worker = workers[slot]!;
    const engine = engines[slot]!;
    let reply = '';
    let firstAt: number | undefined;
    s.busy = true;
    worker.inflight++;
    const prefill = fleet.prefillTicket(slot, inputTokens, signal);
    const submitted = engine.submit(
      { promptTokens: s.tokens.concat(tokenize(tail)), maxTokens: a.maxTokens, ignoreEos: true },
      {
        onToken(piece, _index, at) {
          if (firstAt === undefined) {
            firstAt = at;
            prefill.arrived(at - now, at);
          }
          reply += piece;
        },
        onFinish(req) {
          worker.inflight--;
          // The engine's own count of what it computed, as its usage reports it.
          worker.prefill.observeScale(req.promptTokens, inputTokens);
          if (firstAt !== undefined) prefill.firstByte(firstAt - now, req.promptTokens - req.cachedTokens);
          else prefill.begun();
          result.finished++;
          if (firstAt !== undefined) result.ttftMs.push(firstAt - now);
          // Windows cover the run; a request that finishes after it is in none.
          if (clock.now() < endMs) windowAt(clock.now()).e2eMs.push(clock.now() - now);
          const answer = renderMessage('assistant', reply);
          s.rendered += user + answer;
          for (const t of tokenize(user)) s.tokens.push(t);
          for (const t of tokenize(answer)) s.tokens.push(t);
          s.busy = false;
          afterTurn(s, a);
        },
      },
    );
    if (!submitted.ok) {
      worker.inflight--;
      prefill.begun();
      s.busy = false;
      countRefusal(result, submitted.reason);
      afterTurn(s, a);
      return;
    }
    result.sent++;
    // The index learns the owner once the engine has the request, as the router does
    // once the worker accepted it (and, as there, only for a policy that reads it).
    if (hints !== undefined) index.record(slot, prefixHashes, prefixHashes.length, hints);
  };

  const afterTurn = (s: Session, a: Arrival): void => {
    const next = s.held.shift();
    // Sent from a timer of its own, never from inside the engine's callback: over HTTP
    // the next turn reaches the engine on a later tick, and an engine entered from its
    // own step would start a second step alongside the one under way.
    if (next) clock.schedule(clock.now(), () => send(s, next));
    else if (a.last) sessions.delete(a.session);
  };

  const arrive = (a: Arrival): void => {
    let s = sessions.get(a.session);
    if (!s) {
      const system = renderMessage('system', workload.systemPrompts[a.family]!);
      s = { rendered: system, tokens: tokenize(system), busy: false, held: [] };
      sessions.set(a.session, s);
    }
    if (s.busy) s.held.push(a);
    else send(s, a);
    const next = workload.next();
    if (next.at * 1000 < endMs) clock.schedule(next.at * 1000, () => arrive(next));
  };
  const first = workload.next();
  if (first.at * 1000 < endMs) clock.schedule(first.at * 1000, () => arrive(first));

  clock.advance(endMs);
  result.learnedPrefill = fleet.learnedPrefill();
  const tokens = fleet.finish();
  result.promptTokens = tokens.promptTokens;
  result.cachedTokens = tokens.cachedTokens;
  windowAt(endMs - 1);
  return result;
}

function zeroDecisions(): Record<CacheAwareDecision, number> {
  return { cache_hit: 0, cache_miss: 0, cache_worker_queued: 0, all_queued: 0 };
}
