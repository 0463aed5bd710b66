import type { Options } from 'yargs';
import { ADMIN_TOKEN_OPTION } from '../../src/cli/index.js';

// `routerctl doctor`'s flags, read by its yargs builder and by the man page generator (OPTIONS).

export const DOCTOR_OPTIONS = {
  url: {
    type: 'string',
    describe: 'a live router: its decision ring (GET /admin/decisions)',
    defaultDescription: 'http://127.0.0.1:30000',
  },
  file: {
    type: 'string',
    describe: 'records saved earlier: routerctl explain --once --json --limit N output, or an /admin/decisions document',
  },
  json: { type: 'boolean', default: false, describe: 'the breakdown as JSON' },
  token: ADMIN_TOKEN_OPTION,
} as const satisfies Record<string, Options>;
