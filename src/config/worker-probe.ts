import type { PushInfo } from '../engines/index.js';
import type { EngineHashScheme } from '../prefix/index.js';
import type { LoadReading } from './probe-load.js';

/** What `check-config --probe` learnt about one worker. */
export interface WorkerProbe {
  url: string;
  /** Answered at least one request with an HTTP status. */
  reachable: boolean;
  /** Why it is unreachable, one line; null when reachable. */
  error: string | null;
  /** Model ids from /v1/models; null when that endpoint failed. */
  models: string[] | null;
  /** From /v1/models `owned_by`, the reliable way to tell the two apart. */
  engine: 'sglang' | 'vllm' | null;
  /** The first load endpoint that answered usefully, in the router sampler's order; null = no load reported. */
  load: LoadReading | null;
  /** From /server_info (or /get_server_info), else the ranks a load reading covered. */
  dpSize: number | null;
  /** SGLang --schedule-policy from /server_info, when it says. */
  schedulePolicy: string | null;
  /** routerctl's simulator (its model cards or /server_info say `"simulated": true`). */
  simulated: boolean;
  /** The engine's push channels from /server_info (docs/engine-push.md §Discovery); null when it advertises none. */
  push: PushProbe | null;
}

/** What keying one long prompt costs at a worker's block size, with its engine's hash. */
export interface KeyingCost {
  /** The engine's block hash (docs/engine-push.md §Keying requests). */
  scheme: EngineHashScheme;
  blockSize: number;
  /** Tokens in the prompt keyed (fresh random tokens: no checkpoint helps). */
  tokens: number;
  /** Wall time of the one measurement on this machine. */
  ms: number;
}

/** What the probe learnt of a worker's push channels. */
export interface PushProbe {
  /** KV events are published: the router could build its prefix index from them. */
  kvEvents: boolean;
  /** Tokens per block the events hash; null when the engine does not say. */
  blockSize: number | null;
  /**
   * The load channel: `live` when a LoadStat arrived from every rank within the probe's
   * budget (the router would take load by push), `silent` when advertised but nothing
   * came (a firewall, a wrong host: the router would poll), null when not advertised.
   */
  load: 'live' | 'silent' | null;
  /** The router would bind the KV events endpoint and the engine connect to it (llm-d-inference-sim); false: the router connects. */
  bind: boolean;
  /** One address per DP rank; `replay` is [] when no source names a replay endpoint. */
  endpoints: { kvEvents: string[]; load: string[]; replay: string[] };
  /**
   * `engine`: advertised in /server_info; `config`: from a --kv-events entry with an
   * endpoint (which wins). A replay-only entry leaves this `engine`.
   */
  from: 'engine' | 'config';
  /** Which source named the replay endpoint (docs/engine-push.md §Discovery); null: none did. */
  replayFrom: PushInfo['replayFrom'];
  /** The hash the router would key this worker's requests with, as it chooses (docs/engine-push.md §Keying requests). */
  scheme: EngineHashScheme;
  /** Keying a 100K-token prompt at `blockSize` with `scheme`; null when the block size is unknown. */
  keying: KeyingCost | null;
}
