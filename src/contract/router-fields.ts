import type { FieldRow, FieldsOf, JsonKind } from './json-kind.js';
import { boolean, nullable, number, oneOf, string } from './json-kind.js';

const row = <T>(kind: JsonKind<T>, meaning: string): FieldRow<T> => ({ kind, meaning });

/**
 * The `router` object of /admin/state (docs/metrics-and-admin.md §router object), one
 * row per field in the order the router writes them. AdminRouter, the audit's field
 * list, the console's reader and the docs' table come from it; the router reads each
 * field in router/server/admin-state.ts (routerFields), which the compiler holds to
 * this table.
 */
export const ROUTER_FIELDS = {
  version: row(string, 'routerctl version'),
  policy: row(string, '`--policy`'),
  model_id: row(nullable(string), 'the served model; null while unknown'),
  worker_queue_limit: row(
    nullable(number),
    '`--worker-queue-limit` as given; null = not set (under `fixed`, the gate is off; under `auto`, the base is 6). The same value as in `/admin/decisions`',
  ),
  saturation_queue_floor: row(nullable(number), '`--saturation-queue-floor`; null = pin off'),
  min_load_choices: row(number, '`--min-load-choices`'),
  uptime_s: row(number, 'seconds since the router was built, to 0.1 s'),
  simulated: row(boolean, 'the fleet is the embedded simulator'),
  url: row(string, 'where the router listens; `""` before it listens'),
  ready: row(boolean, 'false before start and while draining'),
  load_freshness_ms: row(number, '`--load-freshness-ms`, to judge `sample_age_ms`'),
  block_size: row(
    number,
    "tokens per block of the prefix index's keys, to turn diverted blocks into tokens: `--block-size`, or under an events index the workers' advertised block size",
  ),
  queue_gate_mode: row(
    oneOf('fixed', 'auto', 'tokens', 'slo'),
    '`--queue-gate`: `fixed` (the reference), or the experimental `auto`, `tokens` and `slo` (docs/routing.md §Gate modes)',
  ),
  queue_gate_limit: row(
    nullable(number),
    "the waiting count at or over which a worker counts as queued now: `--worker-queue-limit` under `fixed`, the limit the pool's queues set under `auto`; null under `tokens` and `slo` or with the gate off",
  ),
  queue_gate_tokens: row(nullable(number), '`--queue-gate-tokens` under `tokens`; otherwise null'),
  queue_gate_rule: row(
    nullable(string),
    'the rule in force as `explain` and the console say it, e.g. `waiting ≥ 6`; null with the gate off',
  ),
  ttft_slo_ms: row(
    nullable(number),
    '`--ttft-slo-ms`: the TTFT goal `--queue-gate slo` and `--admission slo` hold engines to; null when unset',
  ),
  admission: row(oneOf('off', 'slo'), '`--admission`: `off`, or `slo` (hold, then shed with 429, what no engine can start in time)'),
} as const satisfies Readonly<Record<string, FieldRow>>;

/** The `router` object of /admin/state. */
export type AdminRouter = FieldsOf<typeof ROUTER_FIELDS>;
