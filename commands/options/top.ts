import type { Options } from 'yargs';
import { ADMIN_TOKEN_OPTION, wholeNumberAtLeast, wholeNumberBetween } from '../../src/cli/index.js';

// `routerctl top`'s flags, read by its yargs builder and by the man page generator (OPTIONS).

export const TOP_SORT_KEYS = ['waiting', 'rejections', 'running', 'inflight', 'age', 'url'] as const;
export const TOP_SOURCES = ['auto', 'admin', 'prometheus'] as const;

export const TOP_OPTIONS = {
  url: {
    type: 'array',
    string: true,
    default: ['http://127.0.0.1:30000'],
    describe: 'router base URL; repeat for router replicas (merged into one view)',
  },
  engines: {
    type: 'array',
    string: true,
    describe: 'show bare SGLang/vLLM engines, no router: their queues and running requests from their load endpoints (instead of --url)',
  },
  'interval-ms': {
    type: 'number',
    default: 1000,
    // The router's /admin/stream takes 100..60000 (docs/http-edge.md).
    describe: 'update interval, 100 to 60000',
    coerce: wholeNumberBetween('interval-ms', 100, 60_000),
  },
  token: ADMIN_TOKEN_OPTION,
  source: { choices: TOP_SOURCES, default: 'auto', describe: 'auto: admin API, else Prometheus /metrics' },
  once: { type: 'boolean', default: false, describe: 'print one plain-text table and exit' },
  json: { type: 'boolean', default: false, describe: 'print the merged state as JSON and exit' },
  watch: { type: 'boolean', default: false, describe: 'with --json: one JSON line per update (NDJSON) until stopped' },
  replay: {
    type: 'string',
    describe: 'play a --record FILE back (p pause, n step, + and - speed); with --json or --once: the state at its end',
  },
  record: { type: 'string', describe: 'append every router update to FILE (NDJSON), for review after an incident' },
  sort: { choices: TOP_SORT_KEYS, default: 'waiting', describe: 'initial worker order (key s cycles it)' },
  reverse: { type: 'boolean', default: false, describe: 'turn the worker order around (key S)' },
  filter: { type: 'string', default: '', describe: 'show only workers whose URL contains this (key /)' },
  'block-size': {
    type: 'number',
    default: 16,
    describe: 'tokens per prefix block, for the ≈tokens of the diverted histogram',
    coerce: wholeNumberAtLeast('block-size', 1),
  },
  color: { type: 'boolean', default: true, describe: 'colour on a terminal (--no-color or NO_COLOR turns it off)' },
} as const satisfies Record<string, Options>;
