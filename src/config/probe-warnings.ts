import { METRIC_NAMES } from '../contract/index.js';
import type { Origin } from './origin.js';
import { problem } from './problem.js';
import type { ConfigProblem } from './problem.js';
import type { WorkerProbe } from './worker-probe.js';
import type { ConfigKey, RouterConfig } from './schema.js';

/**
 * Turn probe facts into predictions. They are warnings, not errors: a worker may be
 * down for a deploy and come back before serve starts, so only `--strict` makes them
 * fail the check.
 */
export function probeWarnings(
  workers: readonly WorkerProbe[],
  config: RouterConfig,
  origins: Partial<Record<ConfigKey, Origin>>,
): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const at = (key: ConfigKey, flag: string) => ({ flag, origin: origins[key]?.label ?? null });
  const reachable = workers.filter((w) => w.reachable);

  for (const w of workers) {
    if (!w.reachable)
      out.push(
        problem('WARN_PROBE_UNREACHABLE', `worker ${w.url} is unreachable: ${w.error ?? 'no answer'}`, at('workerUrls', '--worker-urls')),
      );
  }

  const limit = config.workerQueueLimit;
  if (limit !== null && reachable.length > 0) {
    // A legacy `{"load": N}` proves the engine reports something, but not the waiting
    // queue the gate compares with the limit, so for the gate it is as blind as none.
    const blind = reachable.filter((w) => w.load === null || w.load.waiting === null);
    if (blind.length > 0) {
      const names = blind.map((w) => (w.load === null ? w.url : `${w.url} (legacy /get_load without a queue length)`)).join(', ');
      const message =
        blind.length === reachable.length
          ? `--worker-queue-limit is set but no worker reports load (${names}); the queue gate is inert`
          : `--worker-queue-limit is set but ${blind.length} of ${reachable.length} workers ${blind.length === 1 ? 'reports' : 'report'} no load (${names}); the gate will admit them blindly`;
      out.push(problem('WARN_PROBE_NO_LOAD', message, at('workerQueueLimit', '--worker-queue-limit')));
    }
    out.push(...dpWarnings(reachable, limit, 'worker-queue-limit', 'limit', at('workerQueueLimit', '--worker-queue-limit')));
    const floor = config.saturationQueueFloor;
    if (floor !== null)
      out.push(...dpWarnings(reachable, floor, 'saturation-queue-floor', 'floor', at('saturationQueueFloor', '--saturation-queue-floor')));
  }

  for (const w of reachable) {
    const push = w.push;
    if (push?.load === 'silent') {
      out.push(
        problem(
          'WARN_PROBE_PUSH_SILENT',
          `worker ${w.url} advertises a LoadStat channel (${push.endpoints.load.join(', ')}) but nothing arrived within the probe; the router would poll its load instead (check that the port is reachable from here)`,
          at('workerUrls', '--worker-urls'),
        ),
      );
    }
    if (push?.kvEvents && push.endpoints.replay.length === 0) {
      out.push(
        problem(
          'WARN_PROBE_NO_REPLAY',
          `worker ${w.url} publishes KV events but names no replay endpoint: a router replica started later begins empty (it cannot fetch what the engine published before it subscribed), and a lost batch cannot be repaired; set replay_endpoint in the engine's --kv-events-config (e.g. "replay_endpoint": "tcp://*:5558"), or name it with --kv-events '{"${w.url}": {"replay-endpoint": "tcp://…"}}'`,
          at('kvEvents', '--kv-events'),
        ),
      );
    }
    // The engine's scheme keys requests only when the index is built from KV events.
    const keying = push?.kvEvents && keysByEvents(config) ? push.keying : null;
    if (keying && keying.ms > KEYING_BUDGET_MS) {
      const sglang = keying.scheme === 'sglang';
      const larger =
        keying.scheme === 'tokens'
          ? 'a larger engine block size (vLLM --block-size)'
          : sglang
            ? 'a larger engine page size (SGLang --page-size)'
            : 'a larger engine block size';
      out.push(
        problem(
          'WARN_PROBE_KEYING_COST',
          `worker ${w.url}: keying a ${keying.tokens / 1000}K-token prompt at its block size of ${keying.blockSize} ${keying.blockSize === 1 ? 'token' : 'tokens'} with ${SCHEME_NAMES[keying.scheme]} took ${keying.ms.toFixed(1)} ms here, more than ${KEYING_BUDGET_MS} ms of the request's time${sglang ? ' (a prompt that begins as one seen before resumes from a checkpoint, and costs less)' : ''}; ${larger} lowers it`,
          at('workerUrls', '--worker-urls'),
        ),
      );
    }
  }

  out.push(...unkeyedWarnings(reachable, config, at('tokenizer', '--tokenizer')));

  for (const w of reachable) {
    if (w.models === null || w.models.length === 0) {
      out.push(
        problem(
          'WARN_PROBE_NO_MODELS',
          `worker ${w.url} answered but /v1/models lists no model; the model cannot be discovered from it`,
          at('workerUrls', '--worker-urls'),
        ),
      );
    }
  }
  const serving = reachable.filter((w): w is WorkerProbe & { models: string[] } => w.models !== null && w.models.length > 0);
  if (config.modelId !== null) {
    for (const w of serving) {
      if (!w.models.includes(config.modelId)) {
        out.push(
          problem(
            'WARN_PROBE_MODEL_MISMATCH',
            `--model-id ${config.modelId} is not served by ${w.url} (it serves ${w.models.join(', ')})`,
            at('modelId', '--model-id'),
          ),
        );
      }
    }
  } else {
    const distinct = new Set(serving.map((w) => w.models.join(', ')));
    if (distinct.size > 1) {
      const list = serving.map((w) => `${w.url}: ${w.models.join(', ')}`).join('; ');
      out.push(
        problem(
          'WARN_PROBE_MODEL_MISMATCH',
          `workers serve different models (${list}); set --model-id to the one to route`,
          at('workerUrls', '--worker-urls'),
        ),
      );
    }
  }
  return out;
}

/** Keying one request costs more than this: worth a warning (docs/configuration.md §Probe warnings). */
const KEYING_BUDGET_MS = 1;

const SCHEME_NAMES = {
  sglang: "SGLang's SHA-256 page chain",
  sim: "the simulator's block hash",
  tokens: "the router's token chain, as vLLM's events are keyed",
} as const;

/** The prefix index may be built from KV events: requests are then keyed with the engines' own hashes. */
function keysByEvents(config: RouterConfig): boolean {
  return config.policy === 'cache_aware' && config.prefixSource !== 'requests';
}

/**
 * With the index built from KV events (--prefix-source events or auto, under
 * cache_aware), a real engine's text prompts can be keyed only by the model's own
 * tokens (docs/routing.md §Keying requests). Without --tokenizer, `events` indexes
 * the events anyway and routes text prompts without prefix affinity, while `auto`
 * keeps the index built from requests. The simulator keys with routerctl's stand-in
 * tokenizer, so it needs none.
 */
function unkeyedWarnings(
  workers: readonly WorkerProbe[],
  config: RouterConfig,
  where: { flag: string; origin: string | null },
): ConfigProblem[] {
  if (!keysByEvents(config) || config.tokenizer !== null) return [];
  const publishing = workers.filter((w) => w.push?.kvEvents === true && !w.simulated);
  const out: ConfigProblem[] = [];
  for (const engine of ['sglang', 'vllm'] as const) {
    const urls = publishing.filter((w) => (w.push!.scheme === 'tokens' ? 'vllm' : 'sglang') === engine).map((w) => w.url);
    if (urls.length === 0) continue;
    const name = engine === 'sglang' ? 'SGLang' : 'vLLM';
    const workersOf = `the ${name} ${urls.length === 1 ? 'worker' : 'workers'} ${urls.join(', ')}`;
    const byTokens = engine === 'sglang' ? "keyed by the engine's hash" : 'keyed by their tokens, as its events key their blocks';
    const message =
      config.prefixSource === 'auto'
        ? `--prefix-source auto without --tokenizer: ${workersOf} ${urls.length === 1 ? 'publishes' : 'publish'} KV events, but text prompts cannot be keyed as the engine tokenizes them, so the prefix index will be built from requests; set --tokenizer PATH to the model's tokenizer.json, or --prefix-source events if the traffic is token ids (/generate input_ids)`
        : `--prefix-source events without --tokenizer: the text prompts (chat, completions, text) of ${workersOf} will be routed without prefix affinity and counted in ${METRIC_NAMES.prefixUnkeyedRequests}{reason="no_tokenizer"}; token-id requests (/generate input_ids, completions with token-id prompts) are ${byTokens}; set --tokenizer PATH to the model's tokenizer.json`;
    out.push(problem('WARN_PROBE_UNKEYED_TEXT', message, where));
  }
  return out;
}

/** The gate compares the waiting count summed over a worker's DP ranks (docs/engine-load.md §DP ranks). */
function dpWarnings(
  workers: readonly WorkerProbe[],
  threshold: number,
  flag: string,
  noun: string,
  where: { flag: string; origin: string | null },
): ConfigProblem[] {
  const bySize = new Map<number, string[]>();
  for (const w of workers) {
    if (w.dpSize !== null && w.dpSize > 1) bySize.set(w.dpSize, [...(bySize.get(w.dpSize) ?? []), w.url]);
  }
  return [...bySize].map(([dp, urls]) => {
    const perRank = Math.round((threshold / dp) * 100) / 100;
    return problem(
      'WARN_PROBE_DP_SCALE',
      `--${flag} ${threshold} with dp-size ${dp}: the ${noun} applies to the sum over ranks, about ${perRank} waiting per rank (${urls.join(', ')})`,
      where,
    );
  });
}
