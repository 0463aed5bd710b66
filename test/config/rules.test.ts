import { describe, expect, it } from 'vitest';
import { OPTIONS, PROBLEM_CLASSES } from '../../src/config/index.js';
import { resolveArgs } from './support.js';

type FirstError = { code: string; message: string; flag?: string | null };

/** [case, command line, first error (null: valid)] */
const table: [string, string[], FirstError | null][] = [
  // Rust router test worker_queue_limit_requires_cache_aware_and_a_positive_value
  // (docs/configuration.md §Why value errors come before policy errors)
  ['limit 4 is accepted', ['--worker-queue-limit', '4'], null],
  [
    'limit 4 under power_of_n is a policy error',
    ['--policy', 'power_of_n', '--worker-queue-limit', '4'],
    {
      code: 'RCTL_E_POLICY_REQUIRES_CACHE_AWARE',
      message: 'cache candidate tuning flags require --policy cache_aware',
      flag: '--worker-queue-limit',
    },
  ],
  [
    'limit 4 under round_robin is a policy error',
    ['--policy', 'round_robin', '--worker-queue-limit', '4'],
    { code: 'RCTL_E_POLICY_REQUIRES_CACHE_AWARE', message: 'cache candidate tuning flags require --policy cache_aware' },
  ],
  [
    'limit 0 under cache_aware',
    ['--worker-queue-limit', '0'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--worker-queue-limit must be at least 1' },
  ],
  [
    'limit 0 under power_of_n: the value error wins',
    ['--policy', 'power_of_n', '--worker-queue-limit', '0'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--worker-queue-limit must be at least 1' },
  ],
  [
    'limit 0 under round_robin: the value error wins',
    ['--policy', 'round_robin', '--worker-queue-limit', '0'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--worker-queue-limit must be at least 1' },
  ],
  ['negative limit', ['--worker-queue-limit', '-3'], { code: 'RCTL_E_VALUE_RANGE', message: '--worker-queue-limit must be at least 1' }],

  // Rust router test saturation_queue_floor_requires_the_queue_gate_and_stays_below_it
  // (docs/configuration.md §Value rules)
  ['floor 2 with limit 4 is accepted', ['--worker-queue-limit', '4', '--saturation-queue-floor', '2'], null],
  ['floor equal to the limit is accepted', ['--worker-queue-limit', '4', '--saturation-queue-floor', '4'], null],
  [
    'floor without a limit names both flags',
    ['--saturation-queue-floor', '2'],
    {
      code: 'RCTL_E_VALUE_FLOOR_REQUIRES_LIMIT',
      message: '--saturation-queue-floor requires --worker-queue-limit (there is no diversion to cancel without it)',
    },
  ],
  [
    'floor 5 above limit 4 says at most, with both numbers',
    ['--worker-queue-limit', '4', '--saturation-queue-floor', '5'],
    {
      code: 'RCTL_E_VALUE_FLOOR_ABOVE_LIMIT',
      message: '--saturation-queue-floor (5) must be at most --worker-queue-limit (4)',
    },
  ],
  [
    'floor 0',
    ['--worker-queue-limit', '4', '--saturation-queue-floor', '0'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--saturation-queue-floor must be at least 1' },
  ],
  [
    'floor 2 with limit 4 under power_of_n is a policy error',
    ['--policy', 'power_of_n', '--worker-queue-limit', '4', '--saturation-queue-floor', '2'],
    { code: 'RCTL_E_POLICY_REQUIRES_CACHE_AWARE', message: 'cache candidate tuning flags require --policy cache_aware' },
  ],
  [
    'floor without a limit under round_robin: the value error wins',
    ['--policy', 'round_robin', '--saturation-queue-floor', '2'],
    {
      code: 'RCTL_E_VALUE_FLOOR_REQUIRES_LIMIT',
      message: '--saturation-queue-floor requires --worker-queue-limit (there is no diversion to cancel without it)',
    },
  ],

  // Rust router test min_load_choices_is_plumbed_and_validated (docs/configuration.md §Value rules, §Policy rules)
  ['min-load-choices 5 is accepted', ['--min-load-choices', '5'], null],
  ['min-load-choices 0', ['--min-load-choices', '0'], { code: 'RCTL_E_VALUE_RANGE', message: '--min-load-choices must be at least 1' }],
  [
    'min-load-choices 3 under power_of_n is a policy error',
    ['--policy', 'power_of_n', '--min-load-choices', '3'],
    {
      code: 'RCTL_E_POLICY_REQUIRES_CACHE_AWARE',
      message: 'cache candidate tuning flags require --policy cache_aware',
      flag: '--min-load-choices',
    },
  ],

  // Rust router test cache_candidate_cli_rejects_invalid_bounds (docs/configuration.md §Value rules)
  [
    'candidate min 0',
    ['--cache-candidate-min-workers', '0'],
    {
      code: 'RCTL_E_VALUE_CANDIDATE_BOUNDS',
      message: '--cache-candidate-min-workers and --cache-candidate-max-workers must be positive and min must not exceed max',
      flag: '--cache-candidate-min-workers',
    },
  ],
  [
    'candidate max 0',
    ['--cache-candidate-max-workers', '0'],
    {
      code: 'RCTL_E_VALUE_CANDIDATE_BOUNDS',
      message: '--cache-candidate-min-workers and --cache-candidate-max-workers must be positive and min must not exceed max',
      flag: '--cache-candidate-max-workers',
    },
  ],
  [
    'candidate min above max',
    ['--cache-candidate-min-workers', '10', '--cache-candidate-max-workers', '4'],
    {
      code: 'RCTL_E_VALUE_CANDIDATE_BOUNDS',
      message: '--cache-candidate-min-workers and --cache-candidate-max-workers must be positive and min must not exceed max',
    },
  ],
  [
    'candidate min above the default max',
    ['--cache-candidate-min-workers', '40'],
    {
      code: 'RCTL_E_VALUE_CANDIDATE_BOUNDS',
      message: '--cache-candidate-min-workers and --cache-candidate-max-workers must be positive and min must not exceed max',
      flag: '--cache-candidate-min-workers',
    },
  ],
  ['candidate min = max is accepted', ['--cache-candidate-min-workers', '4', '--cache-candidate-max-workers', '4'], null],
  [
    'candidate ratio above 1',
    ['--cache-candidate-ratio', '1.5'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--cache-candidate-ratio must be finite and in [0, 1]' },
  ],
  ['candidate ratio 0 and 1 are accepted', ['--cache-candidate-ratio', '1', '--cache-affinity-min-match-ratio', '0'], null],
  [
    'min match ratio below 0',
    ['--cache-affinity-min-match-ratio', '-0.1'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--cache-affinity-min-match-ratio must be finite and in [0, 1]' },
  ],
  [
    'min matched tokens below 0',
    ['--cache-affinity-min-matched-tokens', '-1'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--cache-affinity-min-matched-tokens must be at least 0' },
  ],
  ['switch margin 0 is accepted', ['--cache-switch-margin-tokens', '0'], null],

  // Rust router test native_cache_pressure_flags_build_the_guard_contract (docs/configuration.md §Pressure guard)
  [
    'pressure-rel-threshold 1 is not > 1',
    ['--pressure-rel-threshold', '1'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--pressure-rel-threshold must be finite and greater than 1' },
  ],
  [
    'pressure-rel-threshold infinite',
    ['--pressure-rel-threshold', 'Infinity'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--pressure-rel-threshold must be finite and greater than 1' },
  ],
  [
    'pressure-abs-threshold-ms negative',
    ['--pressure-abs-threshold-ms', '-5'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--pressure-abs-threshold-ms must be finite and non-negative' },
  ],
  [
    'pressure tuning under cache_aware is accepted',
    ['--pressure-rel-threshold', '2', '--pressure-abs-threshold-ms', '0', '--pressure-abs-threshold-tokens', '64'],
    null,
  ],
  [
    'pressure tuning under random',
    ['--policy', 'random', '--pressure-rel-threshold', '2'],
    {
      code: 'RCTL_E_POLICY_PRESSURE_TUNING',
      message: 'pressure guard tuning requires --policy cache_aware',
      flag: '--pressure-rel-threshold',
    },
  ],
  [
    'disable-pressure-guard under round_robin',
    ['--policy', 'round_robin', '--disable-pressure-guard'],
    { code: 'RCTL_E_POLICY_PRESSURE_GUARD', message: '--disable-pressure-guard requires --policy cache_aware' },
  ],
  ['disable-pressure-guard under cache_aware is accepted', ['--disable-pressure-guard'], null],

  // power-of-n belongs to power_of_n (routerctl has no reorg mode)
  ['power-of-n-choices under power_of_n is accepted', ['--policy', 'power_of_n', '--power-of-n-choices', '3'], null],
  [
    'power-of-n-choices under cache_aware',
    ['--power-of-n-choices', '3'],
    { code: 'RCTL_E_POLICY_REQUIRES_POWER_OF_N', message: '--power-of-n-choices requires --policy power_of_n' },
  ],
  [
    'power-of-n-choices 0: the value error wins',
    ['--power-of-n-choices', '0'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--power-of-n-choices must be at least 1' },
  ],

  // Rust router test shutdown_drain_secs_past_the_ceiling_is_rejected, and the other ranges
  // (docs/configuration.md §Value rules)
  [
    'drain 18000 is past the ceiling',
    ['--shutdown-drain-secs', '18000'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--shutdown-drain-secs must be at most 1800 (got 18000)' },
  ],
  ['drain 1800 and 0 are accepted', ['--shutdown-drain-secs', '1800'], null],
  ['drain 0 is accepted', ['--shutdown-drain-secs', '0'], null],
  ['port above 65535', ['--port', '70000'], { code: 'RCTL_E_VALUE_RANGE', message: '--port must be at most 65535 (got 70000)' }],
  ['port 0 is accepted', ['--port', '0'], null],
  [
    'poll interval 0',
    ['--load-poll-interval-ms', '0'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--load-poll-interval-ms must be greater than 0' },
  ],
  ['freshness 0', ['--load-freshness-ms', '0'], { code: 'RCTL_E_VALUE_RANGE', message: '--load-freshness-ms must be greater than 0' }],
  ['load timeout 0', ['--load-timeout-ms', '0'], { code: 'RCTL_E_VALUE_RANGE', message: '--load-timeout-ms must be greater than 0' }],
  [
    'request timeout 0',
    ['--request-timeout-secs', '0'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--request-timeout-secs must be finite and greater than 0' },
  ],
  ['block size 0', ['--block-size', '0'], { code: 'RCTL_E_VALUE_RANGE', message: '--block-size must be at least 1' }],
  [
    'prefix index 0 blocks',
    ['--prefix-index-max-blocks', '0'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--prefix-index-max-blocks must be at least 1' },
  ],
  ['max body 0 bytes', ['--max-body-bytes', '0'], { code: 'RCTL_E_VALUE_RANGE', message: '--max-body-bytes must be at least 1' }],
  ['sim-workers 0', ['--sim-workers', '0'], { code: 'RCTL_E_VALUE_RANGE', message: '--sim-workers must be at least 1' }],
  ['sim-rate negative', ['--sim-rate', '-1'], { code: 'RCTL_E_VALUE_RANGE', message: '--sim-rate must be finite and non-negative' }],
  ['sim-rate 0 is accepted', ['--sim-rate', '0'], null],
  ['cb-threshold below 0', ['--cb-threshold', '-1'], { code: 'RCTL_E_VALUE_RANGE', message: '--cb-threshold must be at least 0' }],
  ['cb-threshold 0 turns the breaker off', ['--cb-threshold', '0'], null],
  ['empty model id', ['--model-id', ''], { code: 'RCTL_E_VALUE_EMPTY', message: '--model-id must be non-empty' }],

  // URLs (docs/configuration.md §Value rules)
  ['two http(s) URLs are accepted', ['--worker-urls', 'http://10.0.0.5:30001', 'https://w2.example:443/'], null],
  ['space-separated URLs in one argument are accepted', ['--worker-urls', 'http://a:1 http://b:1'], null],
  [
    'missing scheme',
    ['--worker-urls', 'localhost:8000'],
    {
      code: 'RCTL_E_VALUE_URL_INVALID',
      message: "--worker-urls entry 'localhost:8000' is not a valid URL: missing scheme, e.g. http://host:port",
    },
  ],
  [
    'unparseable URL',
    ['--worker-urls', 'http://[::1:8000'],
    { code: 'RCTL_E_VALUE_URL_INVALID', message: "--worker-urls entry 'http://[::1:8000' is not a valid URL: cannot be parsed" },
  ],
  [
    'unsupported scheme',
    ['--worker-urls', 'grpc://w1:30001'],
    { code: 'RCTL_E_VALUE_URL_SCHEME', message: "--worker-urls entry 'grpc://w1:30001' has unsupported scheme 'grpc' (use http or https)" },
  ],
  [
    'duplicates after trimming a trailing slash',
    ['--worker-urls', 'http://w1:30001', 'http://w1:30001/'],
    { code: 'RCTL_E_VALUE_URL_DUPLICATE', message: "--worker-urls contains duplicate entry 'http://w1:30001'" },
  ],
  [
    'whitespace-only entry',
    ['--worker-urls', ' '],
    { code: 'RCTL_E_VALUE_URL_EMPTY', message: '--worker-urls must not contain empty or whitespace-only entries' },
  ],

  // discovery and cross-flag (docs/configuration.md §Cross-flag rules)
  [
    'worker URLs with sim workers',
    ['--worker-urls', 'http://w1:1', '--sim-workers', '2'],
    { code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT', message: '--worker-urls and --sim-workers are mutually exclusive; pass exactly one' },
  ],
  ['sim workers alone are accepted', ['--sim-workers', '8', '--sim-rate', '12.5'], null],
  [
    'sim rate with worker URLs',
    ['--worker-urls', 'http://w1:1', '--sim-rate', '5'],
    { code: 'RCTL_E_CROSS_SIM_ONLY', message: '--sim-rate requires the embedded simulated fleet; it would be ignored with --worker-urls' },
  ],
  [
    'cool-down with the breaker off',
    ['--cb-threshold', '0', '--cb-cool-down-secs', '10'],
    {
      code: 'RCTL_E_CROSS_COOL_DOWN_REQUIRES_THRESHOLD',
      message: '--cb-cool-down-secs has no effect with --cb-threshold 0 (the circuit breaker is off); drop one of them',
    },
  ],
  [
    'tokens gate without its threshold',
    ['--queue-gate', 'tokens'],
    {
      code: 'RCTL_E_CROSS_GATE_TOKENS_REQUIRED',
      message: '--queue-gate tokens requires --queue-gate-tokens (the queued prompt tokens at which an engine counts as queued)',
      flag: '--queue-gate',
    },
  ],
  ['tokens gate with its threshold is accepted', ['--queue-gate', 'tokens', '--queue-gate-tokens', '286720'], null],
  [
    'a token threshold with another gate mode',
    ['--queue-gate-tokens', '286720'],
    {
      code: 'RCTL_E_CROSS_GATE_TOKENS_UNUSED',
      message: '--queue-gate-tokens has no effect with --queue-gate fixed; add --queue-gate tokens or drop it',
      flag: '--queue-gate-tokens',
    },
  ],
  [
    'the floor under the auto gate',
    ['--queue-gate', 'auto', '--worker-queue-limit', '4', '--saturation-queue-floor', '2'],
    {
      code: 'RCTL_E_CROSS_GATE_MODE_CONFLICT',
      message: '--saturation-queue-floor needs --queue-gate fixed (the auto gate has no fixed limit to pin under); drop one of them',
      flag: '--saturation-queue-floor',
    },
  ],
  [
    'a waiting-count limit under the tokens gate',
    ['--queue-gate', 'tokens', '--queue-gate-tokens', '100000', '--worker-queue-limit', '6'],
    {
      code: 'RCTL_E_CROSS_GATE_MODE_CONFLICT',
      message: '--worker-queue-limit has no effect with --queue-gate tokens, which counts queued prompt tokens; drop one of them',
      flag: '--worker-queue-limit',
    },
  ],
  ['DNS discovery by SRV records is accepted', ['--dns-discovery', '_sglang._tcp.engines.example'], null],
  ['DNS discovery by A records with a port is accepted', ['--dns-discovery', 'engines.example', '--dns-discovery-port', '30000'], null],
  [
    'DNS discovery by A records without a port',
    ['--dns-discovery', 'engines.example'],
    {
      code: 'RCTL_E_CROSS_DNS_PORT_REQUIRED',
      message:
        '--dns-discovery engines.example names A/AAAA records, which carry no port: add --dns-discovery-port, or name SRV records (_service._tcp.…)',
      flag: '--dns-discovery',
    },
  ],
  [
    'DNS discovery beside a fixed list',
    ['--dns-discovery', '_sglang._tcp.engines.example', '--worker-urls', 'http://w1:1'],
    { code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT', message: '--dns-discovery and --worker-urls are mutually exclusive; pass exactly one' },
  ],
  [
    'a DNS setting without DNS discovery',
    ['--dns-resolver', '127.0.0.1:53'],
    {
      code: 'RCTL_E_CROSS_DNS_ONLY',
      message: '--dns-resolver has no effect without --dns-discovery; add it or drop this',
      flag: '--dns-resolver',
    },
  ],
  [
    'a resolver that is not HOST:PORT',
    ['--dns-discovery', '_s._tcp.x', '--dns-resolver', 'dns.example'],
    {
      code: 'RCTL_E_VALUE_DNS_RESOLVER',
      message: '--dns-resolver must be HOST:PORT, an IP address and a port (got dns.example)',
      flag: '--dns-resolver',
    },
  ],
  ['an IPv6 resolver is accepted', ['--dns-discovery', '_s._tcp.x', '--dns-resolver', '[::1]:5353'], null],
  ['Kubernetes pods by selector are accepted', ['--service-discovery', '--selector', 'app=sglang', 'tier=gpu'], null],
  [
    'selector terms comma-separated, a prefixed key, an empty value',
    ['--service-discovery', '--selector', 'app.kubernetes.io/name=sglang,canary='],
    null,
  ],
  [
    "a Service's EndpointSlices, a namespace, a port and a kubeconfig are accepted",
    [
      '--service-discovery',
      '--service-discovery-service',
      'engines',
      '--service-discovery-namespace',
      'inference',
      '--service-discovery-port',
      '8000',
      '--kubeconfig',
      'kubeconfig.yaml',
    ],
    null,
  ],
  [
    'a selector term that is not k=v',
    ['--service-discovery', '--selector', 'app'],
    { code: 'RCTL_E_VALUE_SELECTOR', message: '--selector takes k=v label terms (got app)', flag: '--selector' },
  ],
  [
    'a selector term with a set operator',
    ['--service-discovery', '--selector', 'app!=sglang'],
    { code: 'RCTL_E_VALUE_SELECTOR', message: '--selector takes k=v label terms (got app!=sglang)', flag: '--selector' },
  ],
  [
    'Kubernetes discovery with nothing to watch',
    ['--service-discovery'],
    {
      code: 'RCTL_E_CROSS_KUBE_TARGET_REQUIRED',
      message:
        '--service-discovery needs --selector k=v (pods by label), --service-discovery-service NAME (its EndpointSlices) or --inference-pool NAME (its pods)',
      flag: '--service-discovery',
    },
  ],
  [
    'an endpoint-picker address without the picker',
    ['--epp-host', '0.0.0.0'],
    {
      code: 'RCTL_E_CROSS_EPP_ONLY',
      message: '--epp-host has no effect without --epp; add --epp PORT or drop this',
      flag: '--epp-host',
    },
  ],
  [
    "the endpoint picker on the HTTP front's port",
    ['--port', '9002', '--epp', '9002'],
    {
      code: 'RCTL_E_CROSS_EPP_PORT',
      message: '--epp 9002 is also --port: give the endpoint picker a port of its own',
      flag: '--epp',
    },
  ],
  [
    'a selector without Kubernetes discovery',
    ['--selector', 'app=sglang'],
    {
      code: 'RCTL_E_CROSS_KUBE_ONLY',
      message: '--selector has no effect without --service-discovery; add it or drop this',
      flag: '--selector',
    },
  ],
  [
    'a Service without Kubernetes discovery',
    ['--service-discovery-service', 'engines'],
    {
      code: 'RCTL_E_CROSS_KUBE_ONLY',
      message: '--service-discovery-service has no effect without --service-discovery; add it or drop this',
      flag: '--service-discovery-service',
    },
  ],
  [
    'a kubeconfig without Kubernetes discovery',
    ['--kubeconfig', 'kubeconfig.yaml'],
    {
      code: 'RCTL_E_CROSS_KUBE_ONLY',
      message: '--kubeconfig has no effect without --service-discovery; add it or drop this',
      flag: '--kubeconfig',
    },
  ],
  [
    'Kubernetes discovery beside a fixed list',
    ['--service-discovery', '--selector', 'app=sglang', '--worker-urls', 'http://w1:1'],
    {
      code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT',
      message: '--service-discovery and --worker-urls are mutually exclusive; pass exactly one',
      flag: '--worker-urls',
    },
  ],
  [
    'Kubernetes discovery beside sim workers',
    ['--service-discovery', '--selector', 'app=sglang', '--sim-workers', '2'],
    {
      code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT',
      message: '--service-discovery and --sim-workers are mutually exclusive; pass exactly one',
      flag: '--sim-workers',
    },
  ],
  [
    'Kubernetes discovery beside DNS discovery',
    ['--service-discovery', '--selector', 'app=sglang', '--dns-discovery', '_s._tcp.x'],
    {
      code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT',
      message: '--service-discovery and --dns-discovery are mutually exclusive; pass exactly one',
      flag: '--dns-discovery',
    },
  ],
  [
    'pods by selector and a Service at once',
    ['--service-discovery', '--selector', 'app=sglang', '--service-discovery-service', 'engines'],
    {
      code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT',
      message: "--selector and --service-discovery-service are mutually exclusive: pods by label, or a Service's EndpointSlices",
      flag: '--service-discovery-service',
    },
  ],
  [
    'a Kubernetes port out of range',
    ['--service-discovery', '--selector', 'app=sglang', '--service-discovery-port', '70000'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--service-discovery-port must be at most 65535 (got 70000)', flag: '--service-discovery-port' },
  ],
  // --inference-pool: the pool's selector and targetPorts name the pods and their port (docs/http-edge.md §Kubernetes discovery)
  ['an InferencePool is accepted', ['--service-discovery', '--inference-pool', 'llama-pool'], null],
  [
    'an InferencePool in a namespace, through a kubeconfig, is accepted',
    [
      '--service-discovery',
      '--inference-pool',
      'llama-pool',
      '--service-discovery-namespace',
      'inference',
      '--kubeconfig',
      'kubeconfig.yaml',
    ],
    null,
  ],
  [
    'an InferencePool without Kubernetes discovery',
    ['--inference-pool', 'llama-pool'],
    {
      code: 'RCTL_E_CROSS_KUBE_ONLY',
      message: '--inference-pool has no effect without --service-discovery; add it or drop this',
      flag: '--inference-pool',
    },
  ],
  [
    'an InferencePool and a selector at once',
    ['--service-discovery', '--inference-pool', 'llama-pool', '--selector', 'app=vllm'],
    {
      code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT',
      message: "--inference-pool and --selector are mutually exclusive: the pool's selector picks the pods",
      flag: '--selector',
    },
  ],
  [
    'an InferencePool and a Service at once',
    ['--service-discovery', '--inference-pool', 'llama-pool', '--service-discovery-service', 'engines'],
    {
      code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT',
      message: "--inference-pool and --service-discovery-service are mutually exclusive: the pool's pods, or a Service's EndpointSlices",
      flag: '--service-discovery-service',
    },
  ],
  [
    'an InferencePool and a port: the pool names the port',
    ['--service-discovery', '--inference-pool', 'llama-pool', '--service-discovery-port', '8000'],
    {
      code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT',
      message: "--inference-pool and --service-discovery-port are mutually exclusive: the pool's targetPorts name the engines' port",
      flag: '--service-discovery-port',
    },
  ],
  [
    'an InferencePool and a port out of range: the value error wins',
    ['--service-discovery', '--inference-pool', 'llama-pool', '--service-discovery-port', '70000'],
    { code: 'RCTL_E_VALUE_RANGE', message: '--service-discovery-port must be at most 65535 (got 70000)', flag: '--service-discovery-port' },
  ],
  [
    'an InferencePool with another source of the fleet',
    ['--service-discovery', '--inference-pool', 'llama-pool', '--worker-urls', 'http://w1:1'],
    {
      code: 'RCTL_E_CROSS_DISCOVERY_CONFLICT',
      message: '--service-discovery and --worker-urls are mutually exclusive; pass exactly one',
      flag: '--worker-urls',
    },
  ],
  [
    'an empty InferencePool name is a value error, not also nothing to watch',
    ['--service-discovery', '--inference-pool', ''],
    { code: 'RCTL_E_VALUE_EMPTY', message: '--inference-pool must be non-empty', flag: '--inference-pool' },
  ],
  [
    'a readiness pause longer than the drain',
    ['--shutdown-readiness-secs', '10', '--shutdown-drain-secs', '5'],
    {
      code: 'RCTL_E_CROSS_READINESS_ABOVE_DRAIN',
      message: '--shutdown-readiness-secs (10) must be at most --shutdown-drain-secs (5): the readiness pause is part of the drain',
      flag: '--shutdown-readiness-secs',
    },
  ],
  ['a short drain with the default pause is accepted (the pause is cut to fit)', ['--shutdown-drain-secs', '2'], null],
  ['the auto gate alone is accepted', ['--queue-gate', 'auto'], null],
  ['the auto gate with a base limit is accepted', ['--queue-gate', 'auto', '--worker-queue-limit', '6'], null],
  ['cool-down alone is accepted (the breaker is on by default)', ['--cb-cool-down-secs', '10'], null],
  ['cool-down with threshold is accepted', ['--cb-threshold', '5', '--cb-cool-down-secs', '10'], null],

  // parse errors
  [
    'unknown flag gets a did-you-mean',
    ['--worker-queue-limt', '4'],
    {
      code: 'RCTL_E_PARSE_UNKNOWN_FLAG',
      message: 'unknown flag --worker-queue-limt; did you mean --worker-queue-limit?',
      flag: '--worker-queue-limt',
    },
  ],
  ['unknown negated flag', ['--no-tuii'], { code: 'RCTL_E_PARSE_UNKNOWN_FLAG', message: 'unknown flag --no-tuii; did you mean --no-tui?' }],
  [
    'a Rust router flag routerctl lacks',
    ['--chat-routing', 'reorg'],
    {
      code: 'RCTL_E_PARSE_UNKNOWN_FLAG',
      message: 'unknown flag --chat-routing: routerctl has no reorg mode; --policy selects the implementation',
    },
  ],
  [
    'non-number',
    ['--worker-queue-limit', 'abc'],
    { code: 'RCTL_E_PARSE_NOT_A_NUMBER', message: "invalid value 'abc' for --worker-queue-limit: expected an integer" },
  ],
  [
    'fraction for an integer',
    ['--worker-queue-limit', '2.5'],
    { code: 'RCTL_E_PARSE_NOT_A_NUMBER', message: "invalid value '2.5' for --worker-queue-limit: expected an integer" },
  ],
  [
    'flag without its value',
    ['--worker-queue-limit'],
    { code: 'RCTL_E_PARSE_MISSING_VALUE', message: '--worker-queue-limit needs a value' },
  ],
  [
    'unknown policy (the removed cache_aware_zmq)',
    ['--policy', 'cache_aware_zmq'],
    {
      code: 'RCTL_E_PARSE_INVALID_CHOICE',
      message: "invalid value 'cache_aware_zmq' for --policy: expected one of round_robin, random, power_of_n, cache_aware",
    },
  ],
  [
    'policy typo gets a did-you-mean',
    ['--policy', 'cache-aware'],
    {
      code: 'RCTL_E_PARSE_INVALID_CHOICE',
      message:
        "invalid value 'cache-aware' for --policy: expected one of round_robin, random, power_of_n, cache_aware (did you mean cache_aware?)",
    },
  ],
  [
    'unknown log format',
    ['--log-format', 'xml'],
    { code: 'RCTL_E_PARSE_INVALID_CHOICE', message: "invalid value 'xml' for --log-format: expected one of text, json" },
  ],
  ['stray positional', ['serve-now'], { code: 'RCTL_E_PARSE_UNEXPECTED_ARGUMENT', message: "unexpected argument 'serve-now'" }],
];

describe('validation rules (docs/configuration.md §Rules and error codes)', () => {
  it.each(table)('%s', async (_name, args, expected) => {
    const r = await resolveArgs(args);
    if (expected === null) {
      expect(r.errors).toEqual([]);
    } else {
      expect(r.errors[0]).toMatchObject(expected);
    }
  });
});

describe('resolved values (docs/configuration.md §Flags)', () => {
  it('an unset limit and floor stay null; min-load-choices defaults to 2', async () => {
    const r = await resolveArgs([]);
    expect(r.config.workerQueueLimit).toBeNull();
    expect(r.config.saturationQueueFloor).toBeNull();
    expect(r.config.minLoadChoices).toBe(2);
  });

  it('plumbs limit, floor and min-load-choices', async () => {
    const r = await resolveArgs(['--worker-queue-limit', '4', '--saturation-queue-floor', '2', '--min-load-choices', '5']);
    expect(r.config).toMatchObject({ workerQueueLimit: 4, saturationQueueFloor: 2, minLoadChoices: 5 });
  });

  it("defaults host, port, policy and timeouts (cache_aware is routerctl's default policy)", async () => {
    const { config } = await resolveArgs([]);
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 30000,
      policy: 'cache_aware',
      requestTimeoutSecs: 300,
      shutdownDrainSecs: 30,
      cbCoolDownSecs: 30,
      cbThreshold: 5,
      workerUrls: [],
      simWorkers: 4,
      simRate: null,
      blockSize: 16,
      prefixIndexMaxBlocks: 1_000_000,
      loadPollIntervalMs: 250,
      loadFreshnessMs: 5000,
      loadTimeoutMs: 1000,
      maxBodyBytes: 33554432,
      tui: true,
      logFormat: 'text',
      cacheAffinityMinMatchedTokens: 1024,
      cacheCandidateMinWorkers: 8,
      cacheCandidateRatio: 0.05,
      cacheCandidateMaxWorkers: 32,
      cacheSwitchMarginTokens: 1024,
      pressureAbsThresholdTokens: 1024,
      pressureRelThreshold: 1.5,
      disablePressureGuard: false,
    });
  });

  it('normalises worker URLs: split on spaces, trailing / dropped', async () => {
    const r = await resolveArgs(['--worker-urls', 'http://a:1/ http://b:1', '--worker-urls', 'https://c']);
    expect(r.config.workerUrls).toEqual(['http://a:1', 'http://b:1', 'https://c']);
  });

  it('every option has help text, a group, and an env name', () => {
    for (const o of OPTIONS) {
      expect(o.describe.length, o.flag).toBeGreaterThan(10);
      expect(o.group, o.flag).toBeTruthy();
    }
  });
});

describe('class order', () => {
  it('lists every problem, parse before value before policy before cross-flag', async () => {
    const r = await resolveArgs([
      '--cb-cool-down-secs',
      '3',
      '--cb-threshold',
      '0', // cross-flag
      '--policy',
      'round_robin',
      '--worker-queue-limit',
      '0', // value, and policy
      '--bogus',
      '1', // parse
      '--min-load-choices',
      '3', // policy
    ]);
    expect(r.errors.map((e) => e.class)).toEqual(['parse', 'value', 'policy', 'policy', 'cross-flag']);
    expect(r.errors.map((e) => e.code)).toEqual([
      'RCTL_E_PARSE_UNKNOWN_FLAG',
      'RCTL_E_VALUE_RANGE',
      'RCTL_E_POLICY_REQUIRES_CACHE_AWARE',
      'RCTL_E_POLICY_REQUIRES_CACHE_AWARE',
      'RCTL_E_CROSS_COOL_DOWN_REQUIRES_THRESHOLD',
    ]);
    expect(r.errors.map((e) => e.flag)).toEqual([
      '--bogus',
      '--worker-queue-limit',
      '--worker-queue-limit',
      '--min-load-choices',
      '--cb-cool-down-secs',
    ]);
  });

  it('keeps the reference order inside the value class (limit, floor, choices)', async () => {
    const r = await resolveArgs(['--min-load-choices', '0', '--saturation-queue-floor', '0', '--worker-queue-limit', '0']);
    expect(r.errors.map((e) => e.flag)).toEqual(['--worker-queue-limit', '--saturation-queue-floor', '--min-load-choices']);
  });

  it('judges an empty --inference-pool once, as a value, not also as nothing to watch', async () => {
    const r = await resolveArgs(['--service-discovery', '--inference-pool', '']);
    expect(r.errors.map((e) => e.code)).toEqual(['RCTL_E_VALUE_EMPTY']);
  });

  it('names each flag an --inference-pool excludes, after the value errors', async () => {
    const r = await resolveArgs([
      '--service-discovery',
      '--inference-pool',
      'llama-pool',
      '--selector',
      'app=vllm',
      '--service-discovery-service',
      'engines',
      '--service-discovery-port',
      '0',
    ]);
    expect(r.errors.map((e) => [e.class, e.flag])).toEqual([
      ['value', '--service-discovery-port'],
      ['cross-flag', '--selector'],
      ['cross-flag', '--service-discovery-service'],
      ['cross-flag', '--service-discovery-port'],
      ['cross-flag', '--service-discovery-service'],
    ]);
  });

  it('does not compare the floor with a limit that is itself invalid', async () => {
    const r = await resolveArgs(['--worker-queue-limit', '0', '--saturation-queue-floor', '5']);
    expect(r.errors.map((e) => e.message)).toEqual(['--worker-queue-limit must be at least 1']);
  });

  it('falls back past an unparseable value instead of also judging it', async () => {
    const r = await resolveArgs(['--policy', 'round_robin', '--worker-queue-limit', 'abc']);
    expect(r.errors.map((e) => e.code)).toEqual(['RCTL_E_PARSE_NOT_A_NUMBER']);
    expect(r.config.workerQueueLimit).toBeNull();
  });

  it('sorts classes in the documented order', () => {
    expect(PROBLEM_CLASSES).toEqual(['parse', 'value', 'policy', 'cross-flag', 'probe']);
  });
});

describe('warnings', () => {
  const warn: [string, string[], NodeJS.ProcessEnv, string | null][] = [
    ['min-load-choices 1 leaves no backup', ['--min-load-choices', '1'], {}, 'RCTL_W_MIN_LOAD_CHOICES_ONE'],
    ['freshness below the poll interval', ['--load-freshness-ms', '200'], {}, 'RCTL_W_FRESHNESS_BELOW_POLL'],
    ['a non-loopback host without a token', ['--host', '0.0.0.0'], {}, 'RCTL_W_ADMIN_API_OPEN'],
    ['a non-loopback host with a token from env', ['--host', '0.0.0.0'], { ROUTERCTL_ADMIN_TOKEN: 's3cret' }, null],
    ['an IPv6 loopback host', ['--host', '::1'], {}, null],
    ['a token on the command line', ['--admin-token', 's3cret'], {}, 'RCTL_W_SECRET_ON_COMMAND_LINE'],
    ['an env variable close to a setting', [], { ROUTERCTL_WORKER_QUEUE_LIMT: '4' }, 'RCTL_W_UNKNOWN_ENV'],
    ['an unrelated ROUTERCTL_ variable', [], { ROUTERCTL_DEBUG: '1', ROUTERCTL_SOMETHING_ELSE_ENTIRELY: 'x' }, null],
    ['a millisecond pressure threshold no HTTP engine can feed', ['--pressure-abs-threshold-ms', '200'], {}, 'RCTL_W_PRESSURE_MS_UNUSED'],
    [
      'a millisecond threshold with the guard off says nothing more',
      ['--pressure-abs-threshold-ms', '200', '--disable-pressure-guard'],
      {},
      null,
    ],
  ];
  it.each(warn)('%s', async (_name, args, env, code) => {
    const r = await resolveArgs(args, { env });
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => w.code)).toEqual(code === null ? [] : [code]);
  });
});
