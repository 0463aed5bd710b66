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
/** How the queue gate decides that an engine is queued (docs/routing.md §Gate modes). */
export const QUEUE_GATE_MODES = ['fixed', 'auto', 'tokens', 'slo'] as const;
export type QueueGateMode = (typeof QUEUE_GATE_MODES)[number];
/** `--admission`: what the router does with a request no worker can start within --ttft-slo-ms (docs/routing.md §SLO admission). */
export const ADMISSION_MODES = ['off', 'slo'] as const;
export type AdmissionMode = (typeof ADMISSION_MODES)[number];
/** Which published limits hard capacity admission holds a worker to (docs/routing.md §Hard capacity admission). */
export const CAPACITY_ADMISSION_MODES = ['reference', 'running', 'off'] as const;
export type CapacityAdmissionMode = (typeof CAPACITY_ADMISSION_MODES)[number];
/** `--dns-discovery-scheme`: how the worker URLs DNS discovery makes begin. */
export const DISCOVERY_SCHEMES = ['http', 'https'] as const;
export type DecisionHeader = (typeof DECISION_HEADERS)[number];

export type OptionType = 'integer' | 'number' | 'string' | 'boolean' | 'enum' | 'url-list' | 'string-list' | 'kv-events';

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
  | 'Queue gate and routing policy'
  | 'Discovery'
  | 'Server'
  | 'Load sampling'
  | 'Router internals'
  | 'Timeouts and shutdown'
  | 'Circuit breaker'
  | 'Simulated fleet (without --worker-urls)'
  | 'Console and logs'
  | 'Cache-aware tuning (reference router parity)'
  | 'Pressure guard (reference router parity)';

/** What one entry of OPTIONS declares. Its value type follows from `type` (and `choices`); `null` as the default makes it nullable. */
export interface OptionDecl {
  readonly key: string;
  /** kebab-case; also the rc key (camelCase accepted too) and the env suffix. */
  readonly flag: string;
  readonly type: OptionType;
  readonly choices?: readonly string[];
  readonly default: unknown;
  /** Help text for a default that is computed or absent ("auto", "unset (gate off)"). */
  readonly defaultLabel?: string;
  /** One line: the --help text, and the start of the entry on every page. */
  readonly describe: string;
  /** More for the man pages, docs/configuration.md and .routerrc.example; `code` spans are set in bold in roff. */
  readonly details?: string;
  /** The value's name in the man pages when the type's (N, X, TEXT...) is not the right word. */
  readonly placeholder?: string;
  /** A value .routerrc.example shows, commented out, for a setting whose default it cannot restate. */
  readonly example?: unknown;
  readonly group: OptionGroup;
  readonly policyFamily?: PolicyFamily;
  readonly range?: Range;
  /** Never echoed back in full (check-config output, JSON). */
  readonly secret?: boolean;
}

/** The value type each option type reads into (an enum reads into its choices). */
interface ValueTypes {
  integer: number;
  number: number;
  string: string;
  boolean: boolean;
  'url-list': string[];
  'string-list': string[];
  'kv-events': KvEventsRule[];
}

type ValueOf<S> = S extends { type: 'enum'; choices: readonly (infer C)[] }
  ? C
  : S extends { type: infer T extends keyof ValueTypes }
    ? ValueTypes[T]
    : never;
type DeclaredValue<S> = ValueOf<S> | (S extends { default: null } ? null : never);

/** What OPTIONS keeps of an entry's literal type: key, type and choices, and its default as a value of its type; the rest reads as declared. */
type Declared<S extends OptionDecl> = OptionDecl & {
  readonly key: S['key'];
  readonly type: S['type'];
  readonly default: DeclaredValue<S>;
} & (S extends { choices: infer C } ? { readonly choices: C } : unknown);

/** One entry. Its default must be a value of its own type, so a slip in either is a compile error. */
function opt<const S extends OptionDecl>(spec: S & { readonly default: Readonly<DeclaredValue<S>> }): Declared<S> {
  return spec as unknown as Declared<S>;
}

const GATE = 'Queue gate and routing policy';
const CACHE = 'Cache-aware tuning (reference router parity)';
const PRESSURE = 'Pressure guard (reference router parity)';

export const OPTIONS = [
  opt({
    key: 'policy',
    flag: 'policy',
    type: 'enum',
    choices: POLICIES,
    default: 'cache_aware',
    describe: `routing policy: ${POLICIES.join(', ')}`,
    group: GATE,
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
    example: 6,
    group: GATE,
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
    example: 4,
    group: GATE,
    policyFamily: 'cache-tuning',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'queueGate',
    flag: 'queue-gate',
    type: 'enum',
    choices: QUEUE_GATE_MODES,
    default: 'fixed',
    describe:
      "when an engine counts as queued: fixed (waiting >= --worker-queue-limit, the reference); auto, tokens and slo are experimental: auto (waiting >= the larger of --worker-queue-limit, default 6, and twice the pool mean), tokens (queued prompt tokens >= --queue-gate-tokens, llm-d tau), slo (its predicted TTFT misses --ttft-slo-ms while another engine's would not)",
    group: GATE,
    policyFamily: 'cache-tuning',
  }),
  opt({
    key: 'queueGateTokens',
    flag: 'queue-gate-tokens',
    type: 'integer',
    default: null,
    defaultLabel: 'unset',
    describe:
      'with --queue-gate tokens: queued uncached prompt tokens at which an engine counts as queued (prefill tok/s x the TTFT you accept)',
    example: 286720,
    group: GATE,
    policyFamily: 'cache-tuning',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'ttftSloMs',
    flag: 'ttft-slo-ms',
    type: 'integer',
    default: null,
    defaultLabel: 'unset',
    describe:
      "the time to first token you promise, ms: what --queue-gate slo and --admission slo hold each engine's predicted TTFT (learnt from its prefill rate) to",
    example: 2000,
    group: GATE,
    range: { atLeast: 1 },
  }),
  opt({
    key: 'admission',
    flag: 'admission',
    type: 'enum',
    choices: ADMISSION_MODES,
    default: 'off',
    describe:
      'experimental: slo holds a request no engine is predicted to start within --ttft-slo-ms while one still could, then answers 429 with Retry-After; x-routerctl-priority >= 1 is never shed',
    group: GATE,
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
    key: 'capacityAdmission',
    flag: 'capacity-admission',
    type: 'enum',
    choices: CAPACITY_ADMISSION_MODES,
    default: 'reference',
    describe:
      'hard capacity admission of prefix owners and pair members: reference (one more running request within the running cap and the whole prompt within free KV), running (the running cap only), off (every worker; only the queue gate turns an owner away)',
    group: CACHE,
    policyFamily: 'cache-tuning',
  }),
  opt({
    key: 'powerOfNChoices',
    flag: 'power-of-n-choices',
    type: 'integer',
    default: 2,
    describe: 'workers sampled per request by --policy power_of_n',
    group: GATE,
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
    example: 200,
    details: 'check-config warns when no engine does.',
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
    example: 0.5,
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
    example: ['http://10.0.0.5:30001', 'http://10.0.0.6:30001'],
    details: 'A trailing / is ignored.',
    group: 'Discovery',
  }),
  opt({
    key: 'dnsDiscovery',
    flag: 'dns-discovery',
    type: 'string',
    default: null,
    defaultLabel: 'off',
    describe:
      'a DNS name whose records are the fleet, re-resolved every --discovery-interval: SRV when it starts with _ (host and port per record), else A/AAAA with --dns-discovery-port',
    example: '_sglang._tcp.engines.example',
    group: 'Discovery',
  }),
  opt({
    key: 'dnsDiscoveryPort',
    flag: 'dns-discovery-port',
    type: 'integer',
    default: null,
    defaultLabel: 'none',
    describe: "the engines' port for A/AAAA records (SRV records carry their own)",
    example: 30000,
    group: 'Discovery',
    range: { atLeast: 1, atMost: 65535 },
  }),
  opt({
    key: 'dnsDiscoveryScheme',
    flag: 'dns-discovery-scheme',
    type: 'enum',
    choices: DISCOVERY_SCHEMES,
    default: 'http',
    describe: 'the scheme of the worker URLs DNS discovery makes',
    group: 'Discovery',
  }),
  opt({
    key: 'dnsResolver',
    flag: 'dns-resolver',
    type: 'string',
    default: null,
    defaultLabel: "the system's",
    describe: 'HOST:PORT of the DNS server DNS discovery asks',
    example: '127.0.0.1:53',
    group: 'Discovery',
  }),
  opt({
    key: 'discoveryInterval',
    flag: 'discovery-interval',
    type: 'number',
    default: 10,
    describe: 'seconds between two resolutions of --dns-discovery',
    group: 'Discovery',
    range: { greaterThan: 0, atMost: 3600 },
  }),
  opt({
    key: 'serviceDiscovery',
    flag: 'service-discovery',
    type: 'boolean',
    default: false,
    describe:
      'watch the Kubernetes API for the fleet: the pods --selector matches, the EndpointSlices of --service-discovery-service, or the pods of --inference-pool',
    details:
      "Credentials are the pod's service account, or --kubeconfig. A pod is a worker while it is Running and Ready, has an IP and is not being deleted; an endpoint while it is not marked unready.",
    group: 'Discovery',
  }),
  opt({
    key: 'selector',
    flag: 'selector',
    type: 'string-list',
    default: [],
    defaultLabel: 'none',
    describe: 'labels a pod must all carry to be a worker under --service-discovery: k=v, repeated, space- or comma-separated',
    placeholder: 'K=V...',
    example: ['app=sglang-worker'],
    group: 'Discovery',
  }),
  opt({
    key: 'serviceDiscoveryService',
    flag: 'service-discovery-service',
    type: 'string',
    default: null,
    defaultLabel: 'none (pods by --selector)',
    describe: "watch this Service's EndpointSlices (discovery.k8s.io/v1) instead of pods",
    example: 'sglang-engines',
    group: 'Discovery',
  }),
  opt({
    key: 'serviceDiscoveryNamespace',
    flag: 'service-discovery-namespace',
    type: 'string',
    default: null,
    defaultLabel: "the router pod's own (with --kubeconfig, its context's), else default",
    describe: 'the Kubernetes namespace --service-discovery watches',
    example: 'inference',
    group: 'Discovery',
  }),
  opt({
    key: 'serviceDiscoveryPort',
    flag: 'service-discovery-port',
    type: 'integer',
    default: null,
    defaultLabel: "8000 for pods; the slice's port for EndpointSlices",
    describe: "the engines' port on discovered pods; with --service-discovery-service, which of the slice's ports",
    example: 8000,
    group: 'Discovery',
    range: { atLeast: 1, atMost: 65535 },
  }),
  opt({
    key: 'inferencePool',
    flag: 'inference-pool',
    type: 'string',
    default: null,
    defaultLabel: 'none',
    describe:
      "under --service-discovery, watch this inference.networking.k8s.io/v1 InferencePool: its selector picks the pods, its first targetPort is the engines' port",
    example: 'llama-pool',
    group: 'Discovery',
  }),
  opt({
    key: 'kubeconfig',
    flag: 'kubeconfig',
    type: 'string',
    default: null,
    defaultLabel: "in-cluster (the pod's service account)",
    describe: 'a kubeconfig whose current context --service-discovery uses: server, token or tokenFile, CA, insecure-skip-tls-verify',
    details: 'Exec plugins, auth providers and client certificates are not read.',
    placeholder: 'PATH',
    example: '~/.kube/config',
    group: 'Discovery',
  }),
  opt({
    key: 'kvEvents',
    flag: 'kv-events',
    type: 'kv-events',
    default: [],
    defaultLabel: 'none (SGLang advertises its own in /server_info)',
    describe:
      "where workers that do not advertise their KV events publish them (vLLM): a mapping from a worker URL or pattern (* = anything) to {endpoint, replay-endpoint, topic, dp-size, bind}, endpoints as the engine's --kv-events-config writes them; JSON on the command line",
    example: { 'http://10.0.0.*:8000': { endpoint: 'tcp://*:5557', 'replay-endpoint': 'tcp://*:5558', topic: 'kv-events', 'dp-size': 1 } },
    details:
      'An endpoint tcp://*:PORT is on the worker URL\'s host, and rank r of dp-size publishes on port + r; for example `\'{"http://10.0.0.*:8000": {"endpoint": "tcp://*:5557"}}\'`. An exact URL wins over patterns, the first matching pattern over later ones. An entry with only a replay-endpoint names an SGLang engine\'s replay socket and keeps what it advertises. With `bind: true` the router binds the endpoint and the engine connects to it (llm-d-inference-sim): one worker by its URL, one rank.',
    group: 'Discovery',
  }),
  opt({
    key: 'modelId',
    flag: 'model-id',
    type: 'string',
    default: null,
    defaultLabel: "discovered from the workers' /v1/models",
    describe: 'the model this router serves; requests naming another model get 404',
    example: 'meta-llama/Llama-3.1-8B-Instruct',
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
    example: 20,
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
    key: 'epp',
    flag: 'epp',
    type: 'integer',
    default: null,
    defaultLabel: 'off',
    describe:
      'also serve the endpoint-picker protocol of the Gateway API Inference Extension (Envoy ext_proc over gRPC, with gRPC health) on this port; --port keeps the admin API, /metrics and health',
    details:
      'The gateway (Envoy) carries the bytes: the picker answers each request with x-gateway-destination-endpoint and the envoy.lb metadata, and watches the response pass for its decision record. 0 picks a free port.',
    placeholder: 'PORT',
    example: 9002,
    group: 'Server',
    range: { atLeast: 0, atMost: 65535 },
  }),
  opt({
    key: 'eppHost',
    flag: 'epp-host',
    type: 'string',
    default: '127.0.0.1',
    describe: 'address the endpoint picker (--epp) listens on',
    group: 'Server',
  }),
  opt({
    key: 'decisionLogSize',
    flag: 'decision-log-size',
    type: 'integer',
    default: 4096,
    describe:
      'routing decisions kept for /admin/decisions, routerctl explain and doctor, in a ring allocated at start (about 1 KB each); 0 keeps none',
    details: "Every response carries its request id in `x-request-id` (the client's own when it sent one).",
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
    details: 'By position, workers are `w0`, `w1`, ... in pool order.',
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
    example: 'change-me',
    group: 'Server',
    secret: true,
  }),
  opt({
    key: 'maxConnections',
    flag: 'max-connections',
    type: 'integer',
    default: 4096,
    describe: 'client connections open at once; more are closed on arrival',
    details: 'Those are closed without an answer.',
    group: 'Server',
    range: { atLeast: 1 },
  }),
  opt({
    key: 'blockSize',
    flag: 'block-size',
    type: 'integer',
    default: 16,
    describe: 'tokens per block of the router prefix index',
    details: 'Text is cut into blocks of 4 characters per token.',
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
      'how long a prefix the router sent to a worker counts as held there before the index learns it (the gap: a burst of requests sharing a new prompt); 0 turns it off',
    placeholder: 'MS',
    details:
      "An engine publishes a prefix's blocks only once its prefill is done, and an index built from requests records a worker as the owner at its answer's first byte, so without this a burst of requests sharing a new prompt is routed blind. A prediction lasts until the index holds as much, or for MS; needs `--policy cache_aware`.",
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
    details:
      "Needs `--policy cache_aware`. Under `events`, requests are keyed by their tokens, in blocks of the size the workers advertise; workers that publish no events the router knows of, or name their blocks otherwise than the rest, never count as prefix owners; vLLM's blocks are keyed by their tokens, with endpoints from its `/kv_event_sources` or `--kv-events`. Without `--tokenizer`, `events` routes text prompts without prefix affinity (`sgl_router_prefix_unkeyed_requests_total`).",
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
    placeholder: 'PATH',
    example: '/models/Qwen3-8B/tokenizer.json',
    details:
      'Text prompts are rendered with the chat template and keyed by these tokens, as the engine computes them; without it, `auto` keeps the index built from requests. A file that cannot be read or is not a tokenizer stops the router with `RCTL_E_TOKENIZER`. The value `llm-d-inference-sim:dummy` names the stand-in tokenizer of llm-d-inference-sim (run with `--force-dummy-tokenizer`), whose KV events carry its ids (docs/peers.md).',
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
    details:
      "It bounds the wait for the worker's response headers and the silence between two chunks of its response. Past it the request is not retried: 504 `upstream_timeout` before any byte, otherwise the stream ends with an error event. Checked on a half-second tick.",
    group: 'Timeouts and shutdown',
    range: { greaterThan: 0 },
  }),
  opt({
    key: 'shutdownReadinessSecs',
    flag: 'shutdown-readiness-secs',
    type: 'number',
    default: 5,
    describe:
      "after SIGTERM, how long /readyz answers 503 with the listener open (a load balancer's probe period); then the router exits once nothing is in flight; at most --shutdown-drain-secs; SIGINT skips it",
    group: 'Timeouts and shutdown',
    range: { atLeast: 0, atMost: 1800 },
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
    details: 'Capped by --client-request-timeout-secs.',
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
    details:
      'A failure is a worker that cannot be reached, a timeout, a 5xx answer or a response cut midway; 429 and 503 neither count nor reset the count (docs/retries-and-breaker.md).',
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
    details:
      'Standard input must be a terminal too. The router then runs in a child process, and q or Ctrl-C drains and stops it; `--no-tui`: log lines only, as without a terminal.',
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
];

/**
 * The resolved configuration: camelCase, defaults applied, `null` where unset. It is
 * read from OPTIONS, as vitest types its CLI table from its config, so no key can be
 * in one and missing from the other, and each value has its entry's type.
 */
export type RouterConfig = { [S in (typeof OPTIONS)[number] as S['key']]: S['default'] };

export type ConfigKey = keyof RouterConfig;

/** An entry of OPTIONS as its readers take it: its default typed as its key's value. */
export interface OptionSpec<K extends ConfigKey = ConfigKey> extends OptionDecl {
  readonly key: K;
  readonly default: RouterConfig[K];
}

/**
 * How help, the resolved-config table, the man pages, docs/configuration.md and
 * .routerrc.example group settings: the gate first, the tuning the reference router
 * shares last, as knobs an operator rarely turns. `heading` names the group in
 * docs/configuration.md, `about` is the line under it there.
 */
export const OPTION_GROUPS: readonly { label: OptionGroup; heading: string; about?: string }[] = [
  {
    label: 'Queue gate and routing policy',
    heading: 'Queue gate and routing policy',
    about: 'The gate is `cache_aware` only; its effect: docs/routing.md §Queue gate.',
  },
  { label: 'Discovery', heading: 'Discovery' },
  { label: 'Server', heading: 'Server' },
  { label: 'Load sampling', heading: 'Load sampling' },
  { label: 'Router internals', heading: 'Router internals' },
  { label: 'Timeouts and shutdown', heading: 'Timeouts and shutdown', about: 'The client timeouts and the drain: docs/http-edge.md.' },
  { label: 'Circuit breaker', heading: 'Circuit breaker', about: 'Semantics: docs/retries-and-breaker.md.' },
  { label: 'Simulated fleet (without --worker-urls)', heading: 'Simulated fleet', about: 'Used only without `--worker-urls`.' },
  { label: 'Console and logs', heading: 'Console and logs' },
  {
    label: 'Cache-aware tuning (reference router parity)',
    heading: 'Cache-aware routing',
    about:
      'The tunables the cache-aware ladder shares with the reference router, under the same rules; all `cache_aware` only. Their effect: docs/routing.md §Selection ladder (cache_aware).',
  },
  {
    label: 'Pressure guard (reference router parity)',
    heading: 'Pressure guard',
    about: "The reference router's pressure guard; all `cache_aware` only.",
  },
];

/** The options grouped for reading; validation keeps the schema (reference) order. */
export function optionsForDisplay(): OptionSpec[] {
  return OPTION_GROUPS.flatMap((g) => OPTIONS.filter((o) => o.group === g.label) as OptionSpec[]);
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
