import { DEFAULT_ENGINE_PARAMS } from '../sim/index.js';
import type { EngineParams } from '../sim/index.js';
import { DEFAULT_WORKLOAD, meanArrivalRate } from '../workload/index.js';
import type { WorkloadOptions } from '../workload/index.js';

/**
 * The embedded default fleet (docs/simulator.md §The embedded default): SGLang
 * engines at their own prefill defaults (a 16,384-token budget in 8,192-token
 * chunks), a running cap and a KV pool the traffic below does not fill, so queues
 * form from prefill work, as they do on a real fleet, rather than at the running cap
 * (where capacity admission, not the queue gate, would turn requests away); run at an
 * eighth of the modelled H100's speed so that a laptop drives them at a modest rate.
 */
export const EMBEDDED_ENGINE: Partial<EngineParams> = { maxRunning: 128, kvBlocks: 65536, maxModelLen: 131072, speedup: 0.125 };

/**
 * Chat traffic for an operations assistant: short system prompts (below the router's
 * 1024-token affinity threshold, so a conversation's own history is what earns
 * affinity and each history has one owner), conversations that open on a pasted log
 * or document and sometimes paste another, 400 users at once (many more than are
 * in flight, so a queued engine's users keep arriving) who join over the first 90 s
 * (all at once, every early request opens a conversation on a cold cache and almost
 * none finishes for half a minute), bursts ×6 for 3 s every 15 s.
 * Its shape (diversions ≥ 5 % and all_queued ≤ 25 % of every 2 minutes, saturation in
 * bursts) is pinned by test/embedded/default-shape.test.ts.
 */
export const EMBEDDED_WORKLOAD: WorkloadOptions = {
  ...DEFAULT_WORKLOAD,
  families: 8,
  systemTokensMin: 300,
  systemTokensMax: 900,
  maxTurns: 12,
  sessions: 400,
  sessionRampSeconds: 90,
  outputMedianTokens: 32,
  outputMaxTokens: 64,
  openingAttachmentShare: 1,
  attachmentShare: 0.1,
  burstFactor: 6,
  burstSeconds: 3,
  burstEverySeconds: 15,
};

/** How the embedded default's traffic is logged when it starts. */
export const EMBEDDED_WORKLOAD_SUMMARY = `chat sessions of up to ${EMBEDDED_WORKLOAD.maxTurns} turns opening on a pasted document, ${EMBEDDED_WORKLOAD.sessions} users joining over ${EMBEDDED_WORKLOAD.sessionRampSeconds} s, short system prompts, bursts x${EMBEDDED_WORKLOAD.burstFactor} for ${EMBEDDED_WORKLOAD.burstSeconds} s every ${EMBEDDED_WORKLOAD.burstEverySeconds} s`;

/** The embedded default's mean load over a burst cycle, as a share of the fleet's capacity. */
const EMBEDDED_UTILISATION = 0.7;

/** Tokens of a user turn besides any pasted document: the question and the chat template's markers. */
const QUESTION_TOKENS = 40;

/**
 * Prompt tokens a request of this workload must prefill on the engine that already
 * holds its conversation: the pasted document, if any, and the new question. The
 * system prompt and the earlier turns (replies included) are cached there.
 */
function meanUncachedTokens(w: Readonly<WorkloadOptions>): number {
  const doc = meanAttachmentTokens(w);
  // Turns per session are uniform in [1, maxTurns]: one request in (maxTurns + 1) / 2 opens one.
  const opening = 2 / (w.maxTurns + 1);
  const pasted = opening * w.openingAttachmentShare + (1 - opening) * w.attachmentShare;
  return pasted * doc + QUESTION_TOKENS;
}

/** Mean tokens of a pasted document: the lognormal's mean, e^(σ²/2) × the median, within the cap. */
function meanAttachmentTokens(w: Readonly<WorkloadOptions>): number {
  const sigma = w.attachmentSigma;
  return Math.min(w.attachmentMaxTokens, w.attachmentMedianTokens * Math.exp((sigma * sigma) / 2));
}

/**
 * Requests/s one engine completes when busy: each request costs a prefill step of its
 * own (β0, plus β1 per uncached token) and its mean output in decode steps shared by
 * the running batch ((β0 + β2·maxRunning) / maxRunning per token), at the engine's
 * speedup. A request rarely shares its prefill step at these rates, and SGLang runs
 * prefill before decode, so the prefill term is what fills up first.
 */
function engineCapacity(engine: Readonly<Partial<EngineParams>>, w: Readonly<WorkloadOptions>): number {
  const p = { ...DEFAULT_ENGINE_PARAMS, ...engine };
  // Lognormal output lengths average e^(σ²/2) × the median, capped by max_tokens.
  const meanOutput = Math.min(w.outputMaxTokens, w.outputMedianTokens * Math.exp((w.outputSigma * w.outputSigma) / 2));
  const prefillMs = p.beta0Ms + p.beta1Ms * meanUncachedTokens(w);
  const decodeMs = (meanOutput * (p.beta0Ms + p.beta2Ms * p.maxRunning)) / p.maxRunning;
  return (1000 * p.speedup) / (prefillMs + decodeMs);
}

/**
 * The embedded default's base (between-bursts) request rate for `workers` engines,
 * derived from the engine model rather than guessed: it loads them to
 * `utilisation` of their capacity on average over a burst cycle; inside a burst the
 * load is burstFactor times the base.
 */
export function autoRate(workers: number, utilisation = EMBEDDED_UTILISATION): number {
  const meanOverBase = meanArrivalRate({ ...EMBEDDED_WORKLOAD, rate: 1 });
  return Math.round(((utilisation * workers * engineCapacity(EMBEDDED_ENGINE, EMBEDDED_WORKLOAD)) / meanOverBase) * 10) / 10;
}
