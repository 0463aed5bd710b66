import { errorCatalogue } from '../errors/index.js';
import type { ErrorEntry } from '../errors/index.js';

/**
 * The catalogue of configuration problem codes. Codes are part of the CLI contract
 * (scripts match them in `check-config --json`): add new ones, never rename or reuse.
 * `man/routerctl-check-config.1` (ERROR CODES) and the code tables of
 * docs/configuration.md are written from this list by `npm run docs` (see
 * docs/configuration.md §Rules and error codes), and a test fails when they differ.
 *
 * Classes, most important first (docs/configuration.md §Problem classes): a parse
 * problem makes the value meaningless, a value problem is wrong under every policy, a
 * policy problem names a flag that the chosen policy would ignore, and cross-flag
 * problems need the rest of the configuration to be right before they can be judged.
 * `probe` warnings come from contacting the workers.
 */
export const PROBLEM_CLASSES = ['parse', 'value', 'policy', 'cross-flag', 'probe'] as const;
export type ProblemClass = (typeof PROBLEM_CLASSES)[number];

export type Severity = 'error' | 'warning';

/** A configuration problem: the shared entry (src/errors/), its class and its severity. */
export interface ConfigCodeEntry extends ErrorEntry {
  readonly class: ProblemClass;
  readonly severity: Severity;
  /** More for docs/configuration.md's code tables (Markdown): the message's wording, the fine print. */
  readonly details?: string;
}

function entry(code: string, cls: ProblemClass, severity: Severity, meaning: string, details?: string): ConfigCodeEntry {
  return details === undefined ? { code, class: cls, severity, meaning } : { code, class: cls, severity, meaning, details };
}

export const ConfigCodes = errorCatalogue({
  PARSE_UNKNOWN_FLAG: entry(
    'RCTL_E_PARSE_UNKNOWN_FLAG',
    'parse',
    'error',
    'a command-line flag routerctl does not have (with a did-you-mean, or why a Rust-router flag is absent)',
  ),
  PARSE_UNKNOWN_KEY: entry('RCTL_E_PARSE_UNKNOWN_KEY', 'parse', 'error', 'an rc file key that is not a setting'),
  PARSE_DUPLICATE_KEY: entry('RCTL_E_PARSE_DUPLICATE_KEY', 'parse', 'error', 'an rc file sets one key in both kebab-case and camelCase'),
  PARSE_UNEXPECTED_ARGUMENT: entry('RCTL_E_PARSE_UNEXPECTED_ARGUMENT', 'parse', 'error', 'a stray positional argument'),
  PARSE_MISSING_VALUE: entry('RCTL_E_PARSE_MISSING_VALUE', 'parse', 'error', 'a flag given without its value; --config with an empty path'),
  PARSE_NOT_A_NUMBER: entry(
    'RCTL_E_PARSE_NOT_A_NUMBER',
    'parse',
    'error',
    'a numeric setting whose value is not a number, or not a (safe) integer where one is needed',
  ),
  PARSE_INVALID_CHOICE: entry(
    'RCTL_E_PARSE_INVALID_CHOICE',
    'parse',
    'error',
    'a value outside an enumeration, such as an unknown --policy',
  ),
  PARSE_INVALID_BOOLEAN: entry(
    'RCTL_E_PARSE_INVALID_BOOLEAN',
    'parse',
    'error',
    'a boolean setting whose value is not true or false (or 1/0, yes/no, on/off)',
  ),
  PARSE_INVALID_TYPE: entry(
    'RCTL_E_PARSE_INVALID_TYPE',
    'parse',
    'error',
    'an rc value of the wrong kind (a list or mapping where a scalar belongs, and so on)',
  ),
  PARSE_RC_SYNTAX: entry(
    'RCTL_E_PARSE_RC_SYNTAX',
    'parse',
    'error',
    'the rc file is not valid YAML, JSON or JavaScript; the message gives the position',
  ),
  PARSE_RC_NOT_FOUND: entry(
    'RCTL_E_PARSE_RC_NOT_FOUND',
    'parse',
    'error',
    'the rc file named by --config or ROUTERCTL_CONFIG (or found by the search) cannot be read',
  ),
  PARSE_RC_TIMEOUT: entry('RCTL_E_PARSE_RC_TIMEOUT', 'parse', 'error', 'a JavaScript rc file did not finish loading within 2 s'),
  PARSE_TOO_MANY_UNKNOWN_KEYS: entry(
    'RCTL_E_PARSE_TOO_MANY_UNKNOWN_KEYS',
    'parse',
    'error',
    'the rc file has more unknown keys than are listed one by one; the rest are counted in one line',
  ),
  PARSE_RC_SHAPE: entry(
    'RCTL_E_PARSE_RC_SHAPE',
    'parse',
    'error',
    'the rc file does not hold a mapping of keys to values; an explicit package.json without a routerctl key',
  ),

  VALUE_RANGE: entry(
    'RCTL_E_VALUE_RANGE',
    'value',
    'error',
    'a number outside its range (at least, at most, greater than, in [0, 1])',
    'Wording by range kind: `must be at least N`; `must be greater than N` (integers) or `must be finite and greater than N` (real numbers); `must be at most N (got V)`; `must be finite and in [0, 1]`; `must be finite and non-negative`. Also `--saturation-queue-floor must be at least 1`',
  ),
  VALUE_DNS_RESOLVER: entry(
    'RCTL_E_VALUE_DNS_RESOLVER',
    'value',
    'error',
    '--dns-resolver that is not HOST:PORT',
    'The message: `--dns-resolver must be HOST:PORT, an IP address and a port (got V)`',
  ),
  VALUE_SELECTOR: entry(
    'RCTL_E_VALUE_SELECTOR',
    'value',
    'error',
    '--selector with a term that is not k=v (a label name, optionally prefixed, and a label value)',
    'The message: `--selector takes k=v label terms (got T)`',
  ),
  VALUE_EMPTY: entry(
    'RCTL_E_VALUE_EMPTY',
    'value',
    'error',
    'a text setting that is set but empty',
    'The message: `--X must be non-empty`',
  ),
  VALUE_FLOOR_REQUIRES_LIMIT: entry(
    'RCTL_E_VALUE_FLOOR_REQUIRES_LIMIT',
    'value',
    'error',
    '--saturation-queue-floor without --worker-queue-limit',
    'The message: `--saturation-queue-floor requires --worker-queue-limit (there is no diversion to cancel without it)`',
  ),
  VALUE_FLOOR_ABOVE_LIMIT: entry(
    'RCTL_E_VALUE_FLOOR_ABOVE_LIMIT',
    'value',
    'error',
    '--saturation-queue-floor greater than --worker-queue-limit',
    'The message: `--saturation-queue-floor (F) must be at most --worker-queue-limit (L)`, skipped when the limit is itself invalid',
  ),
  VALUE_CANDIDATE_BOUNDS: entry(
    'RCTL_E_VALUE_CANDIDATE_BOUNDS',
    'value',
    'error',
    'cache candidate min/max workers not positive, or min above max',
    'The message: `--cache-candidate-min-workers and --cache-candidate-max-workers must be positive and min must not exceed max`, reported against the bound the operator set',
  ),
  VALUE_URL_EMPTY: entry('RCTL_E_VALUE_URL_EMPTY', 'value', 'error', 'an empty or whitespace-only --worker-urls entry'),
  VALUE_URL_INVALID: entry(
    'RCTL_E_VALUE_URL_INVALID',
    'value',
    'error',
    'a --worker-urls entry that is not a URL (a missing scheme is named as such)',
  ),
  VALUE_URL_SCHEME: entry('RCTL_E_VALUE_URL_SCHEME', 'value', 'error', 'a --worker-urls entry whose scheme is not http or https'),
  VALUE_KV_EVENTS: entry(
    'RCTL_E_VALUE_KV_EVENTS',
    'value',
    'error',
    'a --kv-events entry the router cannot use: workers not named by an http(s) URL or pattern, an endpoint that is not tcp://host:port, a dp-size outside 1..1024',
    'Also an `ipc://` socket (named as unreachable), ports that run past 65535 or overlap, a replay endpoint on another host than the endpoint, and a `bind` entry without an endpoint, for a pattern or several ranks, or binding an endpoint another entry binds ([KV event endpoints](#kv-event-endpoints))',
  ),
  VALUE_URL_DUPLICATE: entry('RCTL_E_VALUE_URL_DUPLICATE', 'value', 'error', 'the same worker listed twice, after trimming a trailing /'),

  POLICY_REQUIRES_POWER_OF_N: entry(
    'RCTL_E_POLICY_REQUIRES_POWER_OF_N',
    'policy',
    'error',
    '--power-of-n-choices under a policy other than power_of_n',
    'The message: `--power-of-n-choices requires --policy power_of_n`',
  ),
  POLICY_PRESSURE_GUARD: entry(
    'RCTL_E_POLICY_PRESSURE_GUARD',
    'policy',
    'error',
    '--disable-pressure-guard under a policy other than cache_aware',
    'The message: `--disable-pressure-guard requires --policy cache_aware`',
  ),
  POLICY_REQUIRES_CACHE_AWARE: entry(
    'RCTL_E_POLICY_REQUIRES_CACHE_AWARE',
    'policy',
    'error',
    'a cache candidate tuning flag under a policy other than cache_aware',
    'The message: `cache candidate tuning flags require --policy cache_aware`',
  ),
  POLICY_PRESSURE_TUNING: entry(
    'RCTL_E_POLICY_PRESSURE_TUNING',
    'policy',
    'error',
    'a pressure guard tuning flag under a policy other than cache_aware',
    'The message: `pressure guard tuning requires --policy cache_aware`',
  ),

  CROSS_DISCOVERY_CONFLICT: entry(
    'RCTL_E_CROSS_DISCOVERY_CONFLICT',
    'cross-flag',
    'error',
    'two sources of the fleet at once: --worker-urls, --sim-workers, --dns-discovery or --service-discovery (and, under it, two of --selector, --service-discovery-service and --inference-pool, or --inference-pool with --service-discovery-port)',
  ),
  CROSS_SIM_ONLY: entry('RCTL_E_CROSS_SIM_ONLY', 'cross-flag', 'error', '--sim-rate together with --worker-urls (it would be ignored)'),
  CROSS_COOL_DOWN_REQUIRES_THRESHOLD: entry(
    'RCTL_E_CROSS_COOL_DOWN_REQUIRES_THRESHOLD',
    'cross-flag',
    'error',
    '--cb-cool-down-secs with the circuit breaker turned off (--cb-threshold 0)',
  ),
  CROSS_READINESS_ABOVE_DRAIN: entry(
    'RCTL_E_CROSS_READINESS_ABOVE_DRAIN',
    'cross-flag',
    'error',
    '--shutdown-readiness-secs longer than --shutdown-drain-secs',
  ),
  CROSS_DNS_PORT_REQUIRED: entry(
    'RCTL_E_CROSS_DNS_PORT_REQUIRED',
    'cross-flag',
    'error',
    '--dns-discovery of an A/AAAA name (not starting with _) without --dns-discovery-port',
  ),
  CROSS_DNS_ONLY: entry(
    'RCTL_E_CROSS_DNS_ONLY',
    'cross-flag',
    'error',
    'a DNS discovery setting (--dns-discovery-port, --dns-resolver, --dns-discovery-scheme, --discovery-interval) without --dns-discovery',
  ),
  CROSS_EPP_ONLY: entry('RCTL_E_CROSS_EPP_ONLY', 'cross-flag', 'error', '--epp-host without --epp: there is no endpoint picker to bind'),
  CROSS_EPP_PORT: entry(
    'RCTL_E_CROSS_EPP_PORT',
    'cross-flag',
    'error',
    '--epp on the same port as --port: the picker and the HTTP front each need their own',
  ),
  CROSS_KUBE_TARGET_REQUIRED: entry(
    'RCTL_E_CROSS_KUBE_TARGET_REQUIRED',
    'cross-flag',
    'error',
    '--service-discovery with none of --selector, --service-discovery-service and --inference-pool: nothing to watch',
  ),
  CROSS_KUBE_ONLY: entry(
    'RCTL_E_CROSS_KUBE_ONLY',
    'cross-flag',
    'error',
    'a Kubernetes discovery setting (--selector, --service-discovery-service, --inference-pool, --service-discovery-namespace, --service-discovery-port, --kubeconfig) without --service-discovery',
  ),
  CROSS_GATE_TOKENS_REQUIRED: entry(
    'RCTL_E_CROSS_GATE_TOKENS_REQUIRED',
    'cross-flag',
    'error',
    '--queue-gate tokens without --queue-gate-tokens',
  ),
  CROSS_GATE_TOKENS_UNUSED: entry(
    'RCTL_E_CROSS_GATE_TOKENS_UNUSED',
    'cross-flag',
    'error',
    '--queue-gate-tokens with a gate mode other than tokens',
  ),
  CROSS_GATE_MODE_CONFLICT: entry(
    'RCTL_E_CROSS_GATE_MODE_CONFLICT',
    'cross-flag',
    'error',
    'a flag the chosen --queue-gate mode ignores: --saturation-queue-floor outside fixed, --worker-queue-limit with tokens or slo',
  ),
  CROSS_SLO_REQUIRED: entry(
    'RCTL_E_CROSS_SLO_REQUIRED',
    'cross-flag',
    'error',
    '--queue-gate slo or --admission slo without --ttft-slo-ms',
  ),
  CROSS_SLO_UNUSED: entry('RCTL_E_CROSS_SLO_UNUSED', 'cross-flag', 'error', '--ttft-slo-ms without --queue-gate slo or --admission slo'),

  WARN_MULTIPLE_RC_FILES: entry(
    'RCTL_W_MULTIPLE_RC_FILES',
    'parse',
    'warning',
    'more than one rc file in the folder found; only the first in search order is read',
  ),
  WARN_UNKNOWN_ENV: entry('RCTL_W_UNKNOWN_ENV', 'parse', 'warning', 'a ROUTERCTL_* variable close to, but not, a setting'),
  WARN_MIN_LOAD_CHOICES_ONE: entry(
    'RCTL_W_MIN_LOAD_CHOICES_ONE',
    'value',
    'warning',
    '--min-load-choices 1 draws uniformly, leaving no backup for admission',
    'Only when set explicitly; it also leaves the pressure guard no backup',
  ),
  WARN_SECRET_ON_COMMAND_LINE: entry(
    'RCTL_W_SECRET_ON_COMMAND_LINE',
    'value',
    'warning',
    '--admin-token given as a flag, visible to other users in ps',
  ),
  WARN_FRESHNESS_BELOW_POLL: entry(
    'RCTL_W_FRESHNESS_BELOW_POLL',
    'cross-flag',
    'warning',
    '--load-freshness-ms shorter than --load-poll-interval-ms: samples go stale between polls and the gate admits blindly',
  ),
  WARN_PRESSURE_MS_UNUSED: entry(
    'RCTL_W_PRESSURE_MS_UNUSED',
    'cross-flag',
    'warning',
    '--pressure-abs-threshold-ms set, but no load source routerctl reads carries a prefill-time estimate, so the token threshold decides',
    'With the guard on under `cache_aware` (docs/routing.md §Fresh load)',
  ),
  WARN_KV_EVENTS_UNMATCHED: entry(
    'RCTL_W_KV_EVENTS_UNMATCHED',
    'cross-flag',
    'warning',
    'a --kv-events entry matches none of --worker-urls (a typo in the URL or pattern?)',
  ),
  WARN_ADMIN_API_OPEN: entry(
    'RCTL_W_ADMIN_API_OPEN',
    'cross-flag',
    'warning',
    'a non-loopback --host without --admin-token exposes /admin/*',
  ),
  WARN_PROBE_UNREACHABLE: entry('RCTL_W_PROBE_UNREACHABLE', 'probe', 'warning', 'a worker did not answer within the probe timeout'),
  WARN_PROBE_NO_LOAD: entry(
    'RCTL_W_PROBE_NO_LOAD',
    'probe',
    'warning',
    'with a limit set, reachable workers publish no load: the queue gate would admit them blindly, or be inert',
  ),
  WARN_PROBE_DP_SCALE: entry(
    'RCTL_W_PROBE_DP_SCALE',
    'probe',
    'warning',
    'a worker has several DP ranks; the limit (or floor) applies to their sum, and the message gives the per-rank share',
  ),
  WARN_PROBE_MODEL_MISMATCH: entry(
    'RCTL_W_PROBE_MODEL_MISMATCH',
    'probe',
    'warning',
    'a worker does not serve --model-id, or the workers serve different models',
  ),
  WARN_PROBE_NO_MODELS: entry('RCTL_W_PROBE_NO_MODELS', 'probe', 'warning', 'a worker answered but its /v1/models did not list any model'),
  WARN_PROBE_PUSH_SILENT: entry(
    'RCTL_W_PROBE_PUSH_SILENT',
    'probe',
    'warning',
    'a worker advertises a LoadStat push channel but nothing arrived from it; the router would poll',
    'No frame arrived from every rank within the probe (docs/engine-load.md §Load by push)',
  ),
  // Retired, kept so the code is never reused: the router keys each worker's events at its advertised block size.
  WARN_PROBE_BLOCK_SIZE: entry(
    'RCTL_W_PROBE_BLOCK_SIZE',
    'probe',
    'warning',
    "retired, no longer given: a worker's KV events used another block size than --block-size",
    "The code stays reserved: the router keys each worker's events at the block size it advertises, whatever `--block-size` is",
  ),
  WARN_PROBE_NO_REPLAY: entry(
    'RCTL_W_PROBE_NO_REPLAY',
    'probe',
    'warning',
    'a worker publishes KV events but names no replay endpoint: a router replica started later begins empty',
    'No source names its replay endpoint (docs/engine-push.md §Discovery), and a lost batch cannot be repaired. Set `replay_endpoint` in the engine\'s `--kv-events-config`, or name it with `--kv-events \'{"URL": {"replay-endpoint": "tcp://…"}}\'`',
  ),
  WARN_PROBE_KEYING_COST: entry(
    'RCTL_W_PROBE_KEYING_COST',
    'probe',
    'warning',
    "keying a 100K-token prompt at a worker's block size with its engine's hash takes more than 1 ms",
    'With `--policy cache_aware` and `--prefix-source events` or `auto` (docs/engine-push.md §Keying requests). The probe times it once per hash and block size, on fresh random tokens, so no checkpoint helps; the figure is in `--json` (`push.keying.ms`) whether or not it warns. A larger engine page size (SGLang `--page-size`) lowers it',
  ),
  WARN_PROBE_UNKEYED_TEXT: entry(
    'RCTL_W_PROBE_UNKEYED_TEXT',
    'probe',
    'warning',
    'KV events from SGLang or vLLM without --tokenizer: their text prompts go without prefix affinity',
    'With `--policy cache_aware` and `--prefix-source events` or `auto`, SGLang or vLLM workers (not the simulator). Under `events`, their text prompts (chat, completions, text) are counted in `sgl_router_prefix_unkeyed_requests_total{reason="no_tokenizer"}`, while token-id requests (`/generate` `input_ids`, completions with token-id prompts) are keyed (by SGLang\'s hash; by their tokens for vLLM). Under `auto`, the prefix index is built from requests instead. Set `--tokenizer` to the model\'s `tokenizer.json` (or `--prefix-source events` for token-id traffic)',
  ),
} satisfies Record<string, ConfigCodeEntry>);

export type ConfigCodeName = keyof typeof ConfigCodes;
export type ConfigCode = (typeof ConfigCodes)[ConfigCodeName]['code'];

export function classRank(cls: ProblemClass): number {
  return PROBLEM_CLASSES.indexOf(cls);
}
