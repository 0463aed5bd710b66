import { usageError } from '../errors/index.js';
import { DEFAULT_WORKLOAD } from '../workload/index.js';
import type { BenchOptions } from './bench-main.js';
import { parseBurst } from './burst.js';
import { parseDuration } from './duration.js';
import type { ChatKnobs } from './flags/index.js';

/** The parsed `routerctl bench run|compare` flags (yargs has already checked types and ranges). */
export interface BenchArgv {
  url?: string;
  compare?: string[];
  sweep?: string[];
  'router-args': string;
  rate?: number;
  'fleet-load': number;
  duration?: string;
  warmup: string;
  grace?: string;
  timeout: string;
  seed: number;
  'slo-ttft-ms'?: number;
  chat: ChatKnobs;
  'model-name'?: string;
  'max-in-flight': number;
  'sim-workers': number;
  'sim-max-running': number;
  'sim-speedup': number;
  'sim-kv-blocks': number;
  'sim-flavor': 'sglang' | 'vllm';
  /** Unset by a caller that builds these flags by hand: the simulator's own default then. */
  'sim-context-length'?: number;
  json: boolean;
}

function duration(flag: string, value: string, allowZero: boolean): number {
  const ms = parseDuration(value);
  if (ms === undefined || (!allowZero && ms <= 0)) {
    throw usageError(
      `--${flag} takes a duration such as 60s, 2m, 500ms or a number of seconds${allowZero ? '' : ' greater than 0'} (got "${value}")`,
    );
  }
  return ms;
}

/** Cross-flag rules and units: everything a user can get wrong is a one-line usage error here. */
export function parseBenchArgs(a: BenchArgv): BenchOptions {
  const comparing = (a.compare?.length ?? 0) > 0 || (a.sweep?.length ?? 0) > 0;
  if (a.url !== undefined && comparing)
    throw usageError('--url and --compare/--sweep are exclusive: bench one endpoint, or compare configurations on simulated fleets');
  if (a.url === undefined && !comparing)
    throw usageError('name what to bench: bench run --url URL, or bench compare "ARGS A" "ARGS B" (and/or --sweep FLAG=V1,V2)');
  let url: string | undefined;
  if (a.url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(a.url);
    } catch {
      throw usageError(`--url must be an http(s) URL such as http://127.0.0.1:30000 (got "${a.url}")`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw usageError(`--url must be an http(s) URL (got "${a.url}")`);
    url = a.url.replace(/\/+$/, '');
  }
  const chat = a.chat;
  const tokens = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(chat['system-tokens']);
  const tokensMin = Number(tokens?.[1]);
  const tokensMax = Number(tokens?.[2]);
  if (!tokens || tokensMin < 1 || tokensMax < tokensMin) {
    throw usageError(`--chat system-tokens takes MIN-MAX with 1 <= MIN <= MAX, e.g. 1000-4000 (got "${chat['system-tokens']}")`);
  }
  const burst = parseBurst(chat.burst);
  if (!burst)
    throw usageError(
      `--chat burst takes FACTORxSECONDS/PERIOD such as 3x3s/15s (burst no longer than its period), or off (got "${chat.burst}")`,
    );
  if (chat['max-output-tokens'] < chat['output-tokens']) throw usageError('--chat max-output-tokens must be at least output-tokens');
  const durationMs = a.duration === undefined ? undefined : duration('duration', a.duration, false);
  const warmupMs = duration('warmup', a.warmup, true);
  if (durationMs !== undefined && warmupMs >= durationMs) throw usageError('--warmup must be shorter than --duration');
  return {
    url,
    compare: a.compare ?? [],
    sweep: a.sweep ?? [],
    routerArgs: a['router-args'],
    rate: a.rate,
    load: a['fleet-load'],
    durationMs,
    warmupMs,
    graceMs: a.grace === undefined ? undefined : duration('grace', a.grace, true),
    timeoutMs: duration('timeout', a.timeout, false),
    maxInFlight: a['max-in-flight'],
    model: a['model-name'],
    sloTtftMs: a['slo-ttft-ms'] ?? 2000,
    workload: {
      // No pasted documents: bench's workload is the shared-prompt chat of its flags.
      ...DEFAULT_WORKLOAD,
      seed: a.seed,
      families: chat.families,
      zipfS: chat.zipf,
      systemTokensMin: tokensMin,
      systemTokensMax: tokensMax,
      maxTurns: chat.turns,
      sessions: chat.sessions,
      outputMedianTokens: chat['output-tokens'],
      outputSigma: 0.5,
      outputMaxTokens: chat['max-output-tokens'],
      burstFactor: burst.factor,
      burstSeconds: burst.seconds,
      burstEverySeconds: burst.everySeconds,
    },
    fleet: {
      workers: a['sim-workers'],
      maxRunning: a['sim-max-running'],
      speedup: a['sim-speedup'],
      kvBlocks: a['sim-kv-blocks'],
      flavor: a['sim-flavor'],
      seed: a.seed,
      contextLength: a['sim-context-length'],
    },
    json: a.json,
  };
}
