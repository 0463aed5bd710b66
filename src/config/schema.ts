import type { KvEventsRule } from '../engines/index.js';

/**
 * The one schema behind `serve`, `check-config`, the rc file, the environment and
 * `.routerrc.example`: every flag with its type, default, help text, the policy it
 * belongs to and the range it must fall in. Validation, help and provenance are all
 * derived from this list, so a flag added here is accepted everywhere at once.
 *
 * Order matters: value checks run in schema order, and that order follows the
 * reference router (docs/configuration.md §Value check order) so `serve` reports the
 * same first error it would.
 */

export const POLICIES = ['round_robin', 'random', 'power_of_n', 'cache_aware'] as const;
export type Policy = (typeof POLICIES)[number];

export const LOG_FORMATS = ['text', 'json'] as const;

/** Where the cache-aware index learns who holds which prefix (docs/routing.md §Prefix from engine events). */
export const PREFIX_SOURCES = ['requests', 'events', 'auto'] as const;
export type PrefixSource = (typeof PREFIX_SOURCES)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];

/** `--decision-header`: off, on (workers by position), urls (workers by URL): docs/decisions.md §Decision header. */
export const DECISION_HEADERS = ['off', 'on', 'urls'] as const;
export type DecisionHeader = (typeof DECISION_HEADERS)[number];

/** The resolved configuration: camelCase, defaults applied, `null` where unset. */
export interface RouterConfig {
  policy: Policy;
  /** Normalised: trimmed, trailing `/` removed. Empty means the embedded simulated fleet. */
  workerUrls: string[];
  /** KV event endpoints for workers that do not advertise theirs (docs/engine-push.md §Endpoints from the configuration). */
  kvEvents: KvEventsRule[];
  /** Size of the embedded simulated fleet; used only without worker URLs. */
  simWorkers: number;
  /** Requests/s of synthetic traffic for the embedded fleet; null = auto (~70% of capacity). */
  simRate: number | null;
  /** null = discovered from the workers' /v1/models. */
  modelId: string | null;
  host: string;
  port: number;
  workerQueueLimit: number | null;
  saturationQueueFloor: number | null;
  minLoadChoices: number;
  powerOfNChoices: number;
  pressureRelThreshold: number;
  pressureAbsThresholdMs: number | null;
  cacheAffinityMinMatchRatio: number | null;
  cacheCandidateRatio: number;
  cacheCandidateMinWorkers: number;
  cacheCandidateMaxWorkers: number;
  cacheAffinityMinMatchedTokens: number;
  cacheSwitchMarginTokens: number;
  disablePressureGuard: boolean;
  pressureAbsThresholdTokens: number;
  blockSize: number;
  prefixIndexMaxBlocks: number;
  predictedPrefixTtlMs: number;
  prefixSource: PrefixSource;
  /** A Hugging Face tokenizer.json (or its folder) to key text by the engines' tokens; null = none. */
  tokenizer: string | null;
  loadPollIntervalMs: number;
  loadFreshnessMs: number;
  loadTimeoutMs: number;
  requestTimeoutSecs: number;
  shutdownDrainSecs: number;
  /** 0: the breaker is off. */
  cbThreshold: number;
  cbCoolDownSecs: number;
  adminToken: string | null;
  tui: boolean;
  logFormat: LogFormat;
  maxBodyBytes: number;
  /** Routing decisions kept in the ring (0: none). */
  decisionLogSize: number;
  decisionHeader: DecisionHeader;
  /** Open client connections the router accepts at once; more are closed on arrival. */
  maxConnections: number;
  /** A client must send its request line and headers within this (else 408). */
  clientHeaderTimeoutSecs: number;
  /** A client must send its whole request, body included, within this (else 408). */
  clientRequestTimeoutSecs: number;
}

export type ConfigKey = keyof RouterConfig;

export type OptionType = 'integer' | 'number' | 'string' | 'boolean' | 'enum' | 'url-list' | 'kv-events';

/**
 * A range a value must fall in, whatever the policy. Each kind renders the reference
 * router's wording: `atLeast` → "must be at least N", `greaterThan` → "must be greater
 * than N" (or "must be finite and greater than N" for real numbers), `unitInterval` →
 * "must be finite and in [0, 1]", `nonNegative` → "must be finite and non-negative",
 * `atMost` → "must be at most N (got V)".
 */
export interface Range {
  atLeast?: number;
  greaterThan?: number;
  atMost?: number;
  unitInterval?: true;
  nonNegative?: true;
}

/**
 * Why a flag belongs to a policy. Each family maps to one reference error when the
 * flag is set under another policy (docs/configuration.md §Policy rules; for
 * power-of-n, where routerctl has no reorg mode, it names the policy instead).
 */
export type PolicyFamily = 'cache-tuning' | 'pressure-guard' | 'pressure-tuning' | 'power-of-n';

export type OptionGroup =
  | 'Discovery'
  | 'Routing policy'
  | 'Cache-aware routing (--policy cache_aware)'
  | 'Pressure guard (--policy cache_aware)'
  | 'Router internals'
  | 'Load sampling'
  | 'Timeouts and shutdown'
  | 'Circuit breaker'
  | 'Server'
  | 'Simulated fleet (without --worker-urls)'
  | 'Console and logs';

export interface OptionSpec<K extends ConfigKey = ConfigKey> {
  key: K;
  /** kebab-case; also the rc key (camelCase accepted too) and the env suffix. */
  flag: string;
  type: OptionType;
  choices?: readonly string[];
  default: RouterConfig[K];
  /** Help text for a default that is computed or absent ("auto", "unset (gate off)"). */
  defaultLabel?: string;
  describe: string;
  group: OptionGroup;
  policyFamily?: PolicyFamily;
  range?: Range;
  /** Never echoed back in full (check-config output, JSON). */
  secret?: boolean;
}

/** Keeps each entry's default tied to its key's type. */
function opt<K extends ConfigKey>(spec: OptionSpec<K>): OptionSpec<K> {
  return spec;
}

const CACHE = 'Cache-aware routing (--policy cache_aware)' as const;
const PRESSURE = 'Pressure guard (--policy cache_aware)' as const;

export const OPTIONS = [
  opt({
    key: 'policy',
    flag: 'policy',
    type: 'enum',
    choices: POLICIES,
    default: 'cache_aware',
    describe: `routing policy: ${POLICIES.join(', ')}`,
    group: 'Routing policy',
  }),
  // Reference order for the value checks (docs/configuration.md §Value check order): limit, floor, choices.
  opt({
    key: 'workerQueueLimit',
    flag: 'worker-queue-limit',
    type: 'integer',
    default: null,
    defaultLabel: 'unset (gate off)',
    describe:
      'divert cache-affine requests once an engine queue (waiting requests, summed over DP ranks) reaches this; scale it with dp-size',
    group: CACHE,
    policyFamily: 'cache-tuning',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'saturationQueueFloor',
    flag: 'saturation-queue-floor',
    type: 'integer',
    default: null,
    defaultLabel: 'unset (pin off)',
    describe:
      'when the gate rejected every cache candidate and no worker is provably below this queue, keep the least-pressured prefix owner; 1..limit',
    group: CACHE,
    policyFamily: 'cache-tuning',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'minLoadChoices',
    flag: 'min-load-choices',
    type: 'integer',
    default: 2,
    describe: 'sample size of the min-load fallback; at least the pool size picks the exact minimum, 1 draws uniformly',
    group: CACHE,
    policyFamily: 'cache-tuning',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'powerOfNChoices',
    flag: 'power-of-n-choices',
    type: 'integer',
    default: 2,
    describe: 'workers sampled per request by --policy power_of_n',
    group: 'Routing policy',
    policyFamily: 'power-of-n',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'disablePressureGuard',
    flag: 'disable-pressure-guard',
    type: 'boolean',
    default: false,
    describe: 'never let load pressure override cache affinity',
    group: PRESSURE,
    policyFamily: 'pressure-guard',
  }),
  opt({
    key: 'pressureAbsThresholdTokens',
    flag: 'pressure-abs-threshold-tokens',
    type: 'integer',
    default: 1024,
    describe: 'absolute pressure gap, in queued uncached tokens, the guard requires before overriding affinity',
    group: PRESSURE,
    policyFamily: 'pressure-tuning',
    range: { atLeast: 0 },
  }),
  // Reference order for the checks the Rust router makes after its policy gate (docs/configuration.md §Value check order).
  opt({
    key: 'pressureRelThreshold',
    flag: 'pressure-rel-threshold',
    type: 'number',
    default: 1.5,
    describe: 'the guard overrides cache affinity when the owner is this many times more pressured; > 1',
    group: PRESSURE,
    policyFamily: 'pressure-tuning',
    range: { greaterThan: 1 },
  }),
  opt({
    key: 'pressureAbsThresholdMs',
    flag: 'pressure-abs-threshold-ms',
    type: 'number',
    default: null,
    defaultLabel: 'unset',
    describe:
      'absolute pressure gap, in estimated prefill milliseconds, the guard requires instead of tokens; needs engines that report a prefill-time estimate (HTTP-polled engines do not)',
    group: PRESSURE,
    policyFamily: 'pressure-tuning',
    range: { nonNegative: true },
  }),
  opt({
    key: 'cacheAffinityMinMatchRatio',
    flag: 'cache-affinity-min-match-ratio',
    type: 'number',
    default: null,
    defaultLabel: 'unset',
    describe: 'share of the prompt a prefix owner must hold to keep affinity; in [0, 1]',
    group: CACHE,
    policyFamily: 'cache-tuning',
    range: { unitInterval: true },
  }),
  opt({
    key: 'cacheCandidateRatio',
    flag: 'cache-candidate-ratio',
    type: 'number',
    default: 0.05,
    describe: 'share of the pool considered as cache candidates; in [0, 1]',
    group: CACHE,
    policyFamily: 'cache-tuning',
    range: { unitInterval: true },
  }),
  // min/max have one combined rule (docs/configuration.md §Value rules), so no range of their own.
  opt({
    key: 'cacheCandidateMinWorkers',
    flag: 'cache-candidate-min-workers',
    type: 'integer',
    default: 8,
    describe: 'lower bound on the number of cache candidates; positive and at most the max',
    group: CACHE,
    policyFamily: 'cache-tuning',
  }),
  opt({
    key: 'cacheCandidateMaxWorkers',
    flag: 'cache-candidate-max-workers',
    type: 'integer',
    default: 32,
    describe: 'upper bound on the number of cache candidates; positive',
    group: CACHE,
    policyFamily: 'cache-tuning',
  }),
  opt({
    key: 'cacheAffinityMinMatchedTokens',
    flag: 'cache-affinity-min-matched-tokens',
    type: 'integer',
    default: 1024,
    describe: 'matched prefix tokens a worker needs before cache affinity applies',
    group: CACHE,
    policyFamily: 'cache-tuning',
    range: { atLeast: 0 },
  }),
  opt({
    key: 'cacheSwitchMarginTokens',
    flag: 'cache-switch-margin-tokens',
    type: 'integer',
    default: 1024,
    describe:
      'owners whose uncached work is within this many tokens of the least-uncached owner are ranked by prefill pressure; farther ones are out of the running',
    group: CACHE,
    policyFamily: 'cache-tuning',
    range: { atLeast: 0 },
  }),
  opt({
    key: 'workerUrls',
    flag: 'worker-urls',
    type: 'url-list',
    default: [],
    defaultLabel: 'none (embedded simulated fleet)',
    describe: 'engine base URLs, repeated or space-separated; http(s), no duplicates',
    group: 'Discovery',
  }),
  opt({
    key: 'kvEvents',
    flag: 'kv-events',
    type: 'kv-events',
    default: [],
    defaultLabel: 'none (SGLang advertises its own in /server_info)',
    describe:
      "where workers that do not advertise their KV events publish them (vLLM): a mapping from a worker URL or pattern (* = anything) to {endpoint, replay-endpoint, topic, dp-size}, endpoints as the engine's --kv-events-config writes them; JSON on the command line",
    group: 'Discovery',
  }),
  opt({
    key: 'modelId',
    flag: 'model-id',
    type: 'string',
    default: null,
    defaultLabel: "discovered from the workers' /v1/models",
    describe: 'the model this router serves; requests naming another model get 404',
    group: 'Discovery',
  }),
  opt({
    key: 'simWorkers',
    flag: 'sim-workers',
    type: 'integer',
    default: 4,
    defaultLabel: '4 when no --worker-urls',
    describe: 'engines in the embedded simulated fleet; exclusive with --worker-urls',
    group: 'Simulated fleet (without --worker-urls)',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'simRate',
    flag: 'sim-rate',
    type: 'number',
    default: null,
    defaultLabel: 'auto (~70% of fleet capacity)',
    describe: 'requests/s of synthetic traffic for the embedded simulated fleet',
    group: 'Simulated fleet (without --worker-urls)',
    range: { nonNegative: true },
  }),
  opt({
    key: 'host',
    flag: 'host',
    type: 'string',
    default: '127.0.0.1',
    describe: 'address the router listens on',
    group: 'Server',
  }),
  opt({
    key: 'port',
    flag: 'port',
    type: 'integer',
    default: 30000,
    describe: 'port the router listens on; 0 picks a free one',
    group: 'Server',
    range: { atLeast: 0, atMost: 65535 },
  }),
  opt({
    key: 'decisionLogSize',
    flag: 'decision-log-size',
    type: 'integer',
    default: 4096,
    describe:
      'routing decisions kept for /admin/decisions, routerctl explain and doctor, in a ring allocated at start (about 1 KB each); 0 keeps none',
    group: 'Router internals',
    range: { atLeast: 0 },
  }),
  opt({
    key: 'decisionHeader',
    flag: 'decision-header',
    type: 'enum',
    choices: DECISION_HEADERS,
    default: 'off',
    describe:
      "add x-router-decision to every response (decision, matched blocks, the best owner's): 'on' names workers by their position in the pool, 'urls' by URL",
    group: 'Server',
  }),
  opt({
    key: 'maxBodyBytes',
    flag: 'max-body-bytes',
    type: 'integer',
    default: 33554432,
    describe: 'largest request body accepted; larger ones get 413',
    group: 'Server',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'adminToken',
    flag: 'admin-token',
    type: 'string',
    default: null,
    defaultLabel: 'none (admin API open)',
    describe: 'when set, /admin/* requires Authorization: Bearer <token>; prefer ROUTERCTL_ADMIN_TOKEN',
    group: 'Server',
    secret: true,
  }),
  opt({
    key: 'maxConnections',
    flag: 'max-connections',
    type: 'integer',
    default: 4096,
    describe: 'client connections open at once; more are closed on arrival',
    group: 'Server',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'blockSize',
    flag: 'block-size',
    type: 'integer',
    default: 16,
    describe: 'tokens per block of the router prefix index',
    group: 'Router internals',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'prefixIndexMaxBlocks',
    flag: 'prefix-index-max-blocks',
    type: 'integer',
    default: 1_000_000,
    describe: 'blocks the prefix index keeps before evicting the least recently used',
    group: 'Router internals',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'predictedPrefixTtlMs',
    flag: 'predicted-prefix-ttl-ms',
    type: 'integer',
    default: 2000,
    describe:
      'under an events index, how long a prefix the router sent to a worker counts as held there before its engine announces it (the event gap: a burst of requests sharing a new prompt); 0 turns it off',
    group: 'Router internals',
    range: { atLeast: 0 },
    policyFamily: 'cache-tuning',
  }),
  opt({
    key: 'prefixSource',
    flag: 'prefix-source',
    type: 'enum',
    choices: PREFIX_SOURCES,
    default: 'auto',
    describe:
      "what the prefix index is built from: 'requests' (what the router sent where), 'events' (the engines' KV events: what they hold; without --tokenizer only token-id requests are keyed), 'auto' (events when every worker publishes them and the router can key text prompts too, else requests)",
    group: 'Router internals',
    policyFamily: 'cache-tuning',
  }),
  opt({
    key: 'tokenizer',
    flag: 'tokenizer',
    type: 'string',
    default: null,
    defaultLabel: 'none',
    describe:
      "the served model's Hugging Face tokenizer.json (or its folder, with tokenizer_config.json for the chat template): with KV events, text prompts to SGLang and vLLM workers are keyed by these tokens (token-id requests need none)",
    group: 'Router internals',
  }),
  opt({
    key: 'loadPollIntervalMs',
    flag: 'load-poll-interval-ms',
    type: 'integer',
    default: 250,
    describe: "how often each worker's load is polled",
    group: 'Load sampling',
    range: { greaterThan: 0 },
  }),
  opt({
    key: 'loadFreshnessMs',
    flag: 'load-freshness-ms',
    type: 'integer',
    default: 5000,
    describe: 'a load sample older than this is not fresh (the gate then admits the worker)',
    group: 'Load sampling',
    range: { greaterThan: 0 },
  }),
  opt({
    key: 'loadTimeoutMs',
    flag: 'load-timeout-ms',
    type: 'integer',
    default: 1000,
    describe: 'timeout of one load poll',
    group: 'Load sampling',
    range: { greaterThan: 0 },
  }),
  opt({
    key: 'requestTimeoutSecs',
    flag: 'request-timeout-secs',
    type: 'number',
    default: 300,
    describe: 'upstream request timeout; counts as a breaker failure',
    group: 'Timeouts and shutdown',
    range: { greaterThan: 0 },
  }),
  opt({
    key: 'shutdownDrainSecs',
    flag: 'shutdown-drain-secs',
    type: 'number',
    default: 30,
    describe:
      'the ceiling of a graceful stop: in-flight requests get at most this long to finish, then are cut; 0 cuts at once; at most 1800',
    group: 'Timeouts and shutdown',
    range: { atLeast: 0, atMost: 1800 },
  }),
  opt({
    key: 'clientHeaderTimeoutSecs',
    flag: 'client-header-timeout-secs',
    type: 'number',
    default: 30,
    describe: 'a client must send its request line and headers within this, else 408 and the connection closes',
    group: 'Timeouts and shutdown',
    range: { greaterThan: 0 },
  }),
  opt({
    key: 'clientRequestTimeoutSecs',
    flag: 'client-request-timeout-secs',
    type: 'number',
    default: 60,
    describe: 'a client must send its whole request, body included, within this, else 408; also caps the header timeout',
    group: 'Timeouts and shutdown',
    range: { greaterThan: 0 },
  }),
  opt({
    key: 'cbThreshold',
    flag: 'cb-threshold',
    type: 'integer',
    // On by default: a hung or failing engine must stop receiving traffic without the
    // operator having thought of it first (docs/retries-and-breaker.md).
    default: 5,
    describe: "consecutive failures that open a worker's circuit breaker; 0 turns the breaker off",
    group: 'Circuit breaker',
    range: { atLeast: 0 },
  }),
  opt({
    key: 'cbCoolDownSecs',
    flag: 'cb-cool-down-secs',
    type: 'number',
    default: 30,
    describe: 'how long an open breaker keeps the worker out before one trial request; needs the breaker on',
    group: 'Circuit breaker',
    range: { greaterThan: 0 },
  }),
  opt({
    key: 'tui',
    flag: 'tui',
    type: 'boolean',
    default: true,
    describe: 'open the live console when stdout is a terminal (--no-tui to disable)',
    group: 'Console and logs',
  }),
  opt({
    key: 'logFormat',
    flag: 'log-format',
    type: 'enum',
    choices: LOG_FORMATS,
    default: 'text',
    describe: `log line format: ${LOG_FORMATS.join(', ')}`,
    group: 'Console and logs',
  }),
] as const satisfies readonly OptionSpec[];

/** How help, the resolved-config table and .routerrc.example group settings. */
export const DISPLAY_GROUPS: readonly OptionGroup[] = [
  'Discovery',
  'Routing policy',
  'Cache-aware routing (--policy cache_aware)',
  'Pressure guard (--policy cache_aware)',
  'Load sampling',
  'Router internals',
  'Server',
  'Timeouts and shutdown',
  'Circuit breaker',
  'Simulated fleet (without --worker-urls)',
  'Console and logs',
];

/** The options grouped for reading; validation keeps the schema (reference) order. */
export function optionsForDisplay(): OptionSpec[] {
  return DISPLAY_GROUPS.flatMap((g) => OPTIONS.filter((o) => o.group === g) as OptionSpec[]);
}

/** `--config PATH` is a flag but not a setting: it cannot appear in an rc file. */
export const CONFIG_PATH_FLAG = 'config';
export const CONFIG_PATH_ENV = 'ROUTERCTL_CONFIG';
export const ENV_PREFIX = 'ROUTERCTL_';

/** ROUTERCTL_* variables that are not settings, so they are never "unknown". */
export const NON_SETTING_ENV = new Set([CONFIG_PATH_ENV, 'ROUTERCTL_DEBUG']);

const byKey = new Map<ConfigKey, OptionSpec>(OPTIONS.map((o) => [o.key, o as OptionSpec]));
const byFlag = new Map<string, OptionSpec>(OPTIONS.map((o) => [o.flag, o as OptionSpec]));

export function optionByKey(key: ConfigKey): OptionSpec {
  const spec = byKey.get(key);
  if (!spec) throw new Error(`no such config key: ${key}`);
  return spec;
}

/** Accepts kebab-case or camelCase. */
export function optionByName(name: string): OptionSpec | undefined {
  return byFlag.get(name) ?? byFlag.get(kebabCase(name));
}

export function envName(flag: string): string {
  return ENV_PREFIX + flag.toUpperCase().replace(/-/g, '_');
}

export function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function defaultConfig(): RouterConfig {
  const config: Record<string, unknown> = {};
  for (const o of OPTIONS) config[o.key] = Array.isArray(o.default) ? [...o.default] : o.default;
  return config as unknown as RouterConfig;
}
