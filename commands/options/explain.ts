import type { Options } from 'yargs';
import { ADMIN_TOKEN_OPTION, wholeNumberBetween } from '../../src/cli/index.js';

// `routerctl explain`'s flags, read by its yargs builder and by the man page generator (OPTIONS).

export const EXPLAIN_OPTIONS = {
  url: { type: 'string', default: 'http://127.0.0.1:30000', describe: 'router base URL' },
  request: {
    type: 'string',
    describe: "the request's id (its x-request-id response header, or the client's own x-request-id)",
  },
  json: { type: 'boolean', default: false, describe: 'the record as JSON (one line per decision when following)' },
  once: { type: 'boolean', default: false, describe: 'print the recent decisions and exit instead of following' },
  limit: {
    type: 'number',
    default: 20,
    describe: 'recent decisions printed first, 1 to 10000',
    coerce: wholeNumberBetween('limit', 1, 10_000),
  },
  'interval-ms': {
    type: 'number',
    default: 500,
    describe: 'how often to ask for new decisions, 100 to 60000',
    coerce: wholeNumberBetween('interval-ms', 100, 60_000),
  },
  token: ADMIN_TOKEN_OPTION,
} as const satisfies Record<string, Options>;
