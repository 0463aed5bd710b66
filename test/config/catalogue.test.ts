import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigCodes, PROBLEM_CLASSES, formatProblem, problemJson } from '../../src/config/index.js';
import type { ConfigProblem } from '../../src/config/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the code catalogue', () => {
  const entries = Object.values(ConfigCodes);

  it('has unique, well-formed codes whose prefix matches the severity', () => {
    expect(new Set(entries.map((e) => e.code)).size).toBe(entries.length);
    for (const e of entries) {
      expect(e.code).toMatch(e.severity === 'error' ? /^RCTL_E_[A-Z_]+$/ : /^RCTL_W_[A-Z_]+$/);
      expect(PROBLEM_CLASSES).toContain(e.class);
    }
  });

  it('is documented entry by entry in man/routerctl-check-config.1', async () => {
    const page = await readFile(path.join(repoRoot, 'man/routerctl-check-config.1'), 'utf8');
    for (const e of entries) {
      expect(page, e.code).toContain(`\\fB${e.code}\\fR (${e.class.replace('-', '\\-')})`);
    }
    for (const section of [
      'NAME',
      'SYNOPSIS',
      'DESCRIPTION',
      'OPTIONS',
      'FILES',
      'ENVIRONMENT',
      'EXIT STATUS',
      'ERROR CODES',
      'EXAMPLES',
      'SEE ALSO',
    ]) {
      expect(page).toContain(`.SH ${section}\n`);
    }
  });
});

describe('formatProblem', () => {
  const base: ConfigProblem = {
    code: 'RCTL_E_VALUE_RANGE',
    class: 'value',
    severity: 'error',
    flag: '--worker-queue-limit',
    message: '--worker-queue-limit must be at least 1',
    origin: 'flag',
  };

  it.each([
    ['a flag value', base, 'error RCTL_E_VALUE_RANGE: --worker-queue-limit must be at least 1'],
    [
      'an rc value',
      { ...base, origin: '.routerrc:worker-queue-limit' },
      'error RCTL_E_VALUE_RANGE: --worker-queue-limit must be at least 1 (from .routerrc:worker-queue-limit)',
    ],
    [
      'a message that does not name its flag',
      {
        ...base,
        code: 'RCTL_E_POLICY_REQUIRES_CACHE_AWARE',
        class: 'policy',
        message: 'cache candidate tuning flags require --policy cache_aware',
        origin: 'env ROUTERCTL_WORKER_QUEUE_LIMIT',
      },
      'error RCTL_E_POLICY_REQUIRES_CACHE_AWARE: cache candidate tuning flags require --policy cache_aware (--worker-queue-limit from env ROUTERCTL_WORKER_QUEUE_LIMIT)',
    ],
    [
      'a warning',
      { ...base, code: 'RCTL_W_MIN_LOAD_CHOICES_ONE', severity: 'warning', message: 'x', flag: null, origin: null },
      'warning RCTL_W_MIN_LOAD_CHOICES_ONE: x',
    ],
  ] as [string, ConfigProblem, string][])('%s', (_name, p, line) => {
    expect(formatProblem(p)).toBe(line);
  });

  it('paints the label only when colour is on', () => {
    expect(formatProblem(base, { color: true })).toBe(
      '\u001b[31merror\u001b[39m RCTL_E_VALUE_RANGE: --worker-queue-limit must be at least 1',
    );
  });

  it('serialises exactly the five documented keys', () => {
    expect(Object.keys(problemJson(base))).toEqual(['code', 'class', 'flag', 'message', 'origin']);
  });
});
