import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { assertBuilt, repoRoot, runCli } from './support.js';

beforeAll(() => assertBuilt());

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'routerctl-cli-'));
});
afterEach(async () => rm(root, { recursive: true, force: true }));

const write = async (rel: string, text: string) => {
  await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  await writeFile(path.join(root, rel), text);
};
const check = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  runCli(['check-config', ...args], { cwd: options.cwd ?? root, home: root, ...(options.env ? { env: options.env } : {}) });

interface JsonReport {
  valid: boolean;
  errors: { code: string; class: string; flag: string | null; message: string; origin: string | null }[];
  warnings: { code: string; class: string; flag: string | null; message: string; origin: string | null }[];
  config: Record<string, unknown>;
  origins: Record<string, string>;
  rcFile: string | null;
  probe: { timeoutMs: number; workers: { url: string; reachable: boolean; load: unknown }[] } | null;
}
const json = (stdout: string) => JSON.parse(stdout) as JsonReport;

describe('routerctl check-config: exit codes and lines', () => {
  it('exits 0 for a valid configuration and prints each value with its origin', async () => {
    const r = await check(['--worker-queue-limit', '4']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')[0]).toBe('configuration is valid (no rc file)');
    expect(r.stdout).toMatch(/^ {2}worker-queue-limit +4 +flag$/m);
    expect(r.stdout).toMatch(/^ {2}policy +cache_aware +default$/m);
  });

  it.each([
    [['--policy', 'round_robin', '--worker-queue-limit', '0'], 'error RCTL_E_VALUE_RANGE: --worker-queue-limit must be at least 1'],
    [
      ['--policy', 'round_robin', '--worker-queue-limit', '4'],
      'error RCTL_E_POLICY_REQUIRES_CACHE_AWARE: cache candidate tuning flags require --policy cache_aware (--worker-queue-limit)',
    ],
    [
      ['--saturation-queue-floor', '2'],
      'error RCTL_E_VALUE_FLOOR_REQUIRES_LIMIT: --saturation-queue-floor requires --worker-queue-limit (there is no diversion to cancel without it)',
    ],
    [
      ['--worker-queue-limit', '4', '--saturation-queue-floor', '5'],
      'error RCTL_E_VALUE_FLOOR_ABOVE_LIMIT: --saturation-queue-floor (5) must be at most --worker-queue-limit (4)',
    ],
    [['--min-load-choices', '0'], 'error RCTL_E_VALUE_RANGE: --min-load-choices must be at least 1'],
    [['--polcy', 'random'], 'error RCTL_E_PARSE_UNKNOWN_FLAG: unknown flag --polcy; did you mean --policy?'],
  ])('exits 1 for %j with the error first', async (args, first) => {
    const r = await check(args);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(first);
    expect(r.stderr).toBe('');
  });

  it('lists every problem, most important class first, then a summary', async () => {
    const r = await check([
      '--cb-cool-down-secs',
      '5',
      '--cb-threshold',
      '0',
      '--policy',
      'round_robin',
      '--worker-queue-limit',
      '0',
      '--bogus',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout.trimEnd().split('\n')).toEqual([
      'error RCTL_E_PARSE_UNKNOWN_FLAG: unknown flag --bogus',
      'error RCTL_E_VALUE_RANGE: --worker-queue-limit must be at least 1',
      'error RCTL_E_POLICY_REQUIRES_CACHE_AWARE: cache candidate tuning flags require --policy cache_aware (--worker-queue-limit)',
      'error RCTL_E_CROSS_COOL_DOWN_REQUIRES_THRESHOLD: --cb-cool-down-secs has no effect with --cb-threshold 0 (the circuit breaker is off); drop one of them',
      'configuration is invalid: 4 errors, 0 warnings (no rc file)',
    ]);
  });

  it('exits 0 on warnings, 1 with --strict', async () => {
    const loose = await check(['--min-load-choices', '1']);
    expect(loose.code).toBe(0);
    expect(loose.stdout).toContain('warning RCTL_W_MIN_LOAD_CHOICES_ONE: --min-load-choices 1 draws uniformly');
    const strict = await check(['--min-load-choices', '1', '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('1 warning (--strict: failing)');
  });

  it('honours NO_COLOR', async () => {
    const colored = await check(['--worker-queue-limit', '0'], { env: { FORCE_COLOR: '1' } });
    expect(colored.stdout).toContain('\u001b[31merror\u001b[39m');
    const plain = await check(['--worker-queue-limit', '0'], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(plain.stdout).not.toContain('\u001b[');
  });

  it('has help with the settings grouped', async () => {
    const r = await check(['--help']);
    expect(r.code).toBe(0);
    for (const heading of [
      'Discovery:',
      'Queue gate and routing policy:',
      'Cache-aware tuning (reference router parity):',
      'check-config:',
    ])
      expect(r.stdout).toContain(heading);
    expect(r.stdout).toContain('--worker-queue-limit');
  });
});

describe('routerctl check-config --json', () => {
  it('prints the documented shape for an invalid configuration', async () => {
    const r = await check(['--json', '--policy', 'round_robin', '--worker-queue-limit', '0']);
    expect(r.code).toBe(1);
    const report = json(r.stdout);
    expect(Object.keys(report)).toEqual(['valid', 'errors', 'warnings', 'config', 'origins', 'rcFile', 'probe', 'discovery']);
    expect(report.valid).toBe(false);
    expect(report.errors[0]).toEqual({
      code: 'RCTL_E_VALUE_RANGE',
      class: 'value',
      flag: '--worker-queue-limit',
      message: '--worker-queue-limit must be at least 1',
      origin: 'flag',
    });
    expect(report.errors[1]).toMatchObject({ code: 'RCTL_E_POLICY_REQUIRES_CACHE_AWARE', class: 'policy' });
    expect(report.config).toMatchObject({ policy: 'round_robin', 'worker-queue-limit': 0, 'min-load-choices': 2, 'worker-urls': [] });
    expect(report.origins).toMatchObject({ policy: 'flag', 'min-load-choices': 'default' });
    expect(report.rcFile).toBeNull();
    expect(report.probe).toBeNull();
  });

  it('still prints the object for parse errors', async () => {
    const r = await check(['--json', 'stray', '--policy', 'cache_aware_zmq', '--nope']);
    expect(r.code).toBe(1);
    const report = json(r.stdout);
    expect(report.errors.map((e) => [e.code, e.class])).toEqual([
      ['RCTL_E_PARSE_UNKNOWN_FLAG', 'parse'],
      ['RCTL_E_PARSE_UNEXPECTED_ARGUMENT', 'parse'],
      ['RCTL_E_PARSE_INVALID_CHOICE', 'parse'],
    ]);
    expect(report.config.policy).toBe('cache_aware');
  });

  it('is valid with warnings, and hides the admin token', async () => {
    const r = await check(['--json', '--host', '0.0.0.0'], { env: { ROUTERCTL_ADMIN_TOKEN: 'hunter2' } });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('hunter2');
    const report = json(r.stdout);
    expect(report.valid).toBe(true);
    expect(report.config['admin-token']).toBe('(set, hidden)');
    expect(report.origins['admin-token']).toBe('env ROUTERCTL_ADMIN_TOKEN');
  });

  it('--strict makes warnings invalid', async () => {
    const r = await check(['--json', '--strict', '--load-freshness-ms', '100']);
    expect(r.code).toBe(1);
    const report = json(r.stdout);
    expect(report.valid).toBe(false);
    expect(report.errors).toEqual([]);
    expect(report.warnings.map((w) => w.code)).toEqual(['RCTL_W_FRESHNESS_BELOW_POLL']);
  });
});

describe('routerctl check-config with rc files', () => {
  it('finds an rc file in a parent folder', async () => {
    await write('.routerrc', 'worker-queue-limit: 5\nmin-load-choices: 3\n');
    await mkdir(path.join(root, 'svc/deploy'), { recursive: true });
    const r = await check(['--json'], { cwd: path.join(root, 'svc/deploy') });
    expect(r.code).toBe(0);
    const report = json(r.stdout);
    expect(report.rcFile).toBe(path.join(root, '.routerrc'));
    expect(report.config['worker-queue-limit']).toBe(5);
    expect(report.origins['worker-queue-limit']).toBe('../../.routerrc:worker-queue-limit');
  });

  it('lets a flag override the rc value', async () => {
    await write('.routerrc.yaml', 'worker-queue-limit: 5\n');
    const r = await check(['--json', '--worker-queue-limit', '8']);
    const report = json(r.stdout);
    expect(report.config['worker-queue-limit']).toBe(8);
    expect(report.origins['worker-queue-limit']).toBe('flag');
  });

  it('names the file and key of a wrong rc value', async () => {
    await write('.routerrc', 'policy: round_robin\nworkerQueueLimit: 0\n');
    const r = await check([]);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([
      'error RCTL_E_VALUE_RANGE: --worker-queue-limit must be at least 1 (from .routerrc:workerQueueLimit)',
      'error RCTL_E_POLICY_REQUIRES_CACHE_AWARE: cache candidate tuning flags require --policy cache_aware (--worker-queue-limit from .routerrc:workerQueueLimit)',
    ]);
  });

  it('names an unknown rc key with a did-you-mean', async () => {
    await write('.routerrc.json', '{"worker-queue-limt": 4}');
    const r = await check([]);
    expect(r.stdout.split('\n')[0]).toBe(
      'error RCTL_E_PARSE_UNKNOWN_KEY: unknown key worker-queue-limt in .routerrc.json; did you mean worker-queue-limit? (from .routerrc.json:worker-queue-limt)',
    );
  });

  it.each([
    [
      '.routerrc',
      'policy: cache_aware\n  worker-queue-limit: 4\n',
      'error RCTL_E_PARSE_RC_SYNTAX: cannot parse ../.routerrc: bad indentation of a mapping entry (line 2, column 21)',
    ],
    [
      '.routerrc.json',
      '{\n  "worker-queue-limit": 4,\n  "policy": cache_aware\n}\n',
      "error RCTL_E_PARSE_RC_SYNTAX: cannot parse ../.routerrc.json: unexpected 'c', expected a value (line 3, column 13)",
    ],
  ])('reports a broken %s in one line with its position, no stack trace', async (name, text, line) => {
    await write(name, text);
    await mkdir(path.join(root, 'sub'));
    const r = await check([], { cwd: path.join(root, 'sub') });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toEqual([line, 'configuration is invalid: 1 error, 0 warnings (no rc file)']);
    expect(r.stdout).not.toMatch(/\n\s+at /);
  });

  it('reports a broken package.json in the cwd as one line, not a crash', async () => {
    await write('package.json', '{"name": "svc",}');
    const r = await check([]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')[0]).toBe(
      "error RCTL_E_PARSE_RC_SYNTAX: cannot parse package.json: unexpected '}', expected a property name (no trailing comma in JSON) (line 1, column 16)",
    );
  });

  it('reports a broken rc file in --json too', async () => {
    await write('.routerrc', 'a: [\n');
    const r = await check(['--json']);
    expect(r.code).toBe(1);
    expect(json(r.stdout).errors).toMatchObject([{ code: 'RCTL_E_PARSE_RC_SYNTAX', class: 'parse', origin: '.routerrc' }]);
  });

  it('passes on .routerrc.example', async () => {
    const r = await check(['--config', path.join(repoRoot, '.routerrc.example')]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`configuration is valid (rc file ${path.join(repoRoot, '.routerrc.example')})`);
  });

  it('never writes a file', async () => {
    await write('routerctl.config.mjs', 'export default { workerQueueLimit: 3 };\n');
    await write('package.json', '{"name": "x"}');
    const before = await readdir(root, { recursive: true });
    const r = await check(['--probe']);
    expect(r.code).toBe(0);
    expect((await readdir(root, { recursive: true })).sort()).toEqual(before.sort());
  });
});

describe('routerctl check-config --probe against simulated engines', () => {
  let fleet: SimFleet;
  let down: string;
  beforeAll(async () => {
    fleet = await startSimFleet({ workers: 2, host: '127.0.0.1', portBase: 0, speedup: 50 });
    await fetch(`${fleet.urls[1]}/sim/config`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ load_reporting: false }),
    });
    const s = createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    down = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => s.close(() => resolve()));
  });
  afterAll(async () => fleet?.close());

  it('warns about the worker without load and the unreachable one, and exits 0', async () => {
    const [reporting, silent] = fleet.urls as [string, string];
    const r = await check(['--worker-urls', reporting, silent, down, '--worker-queue-limit', '4', '--probe']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('probe (2000 ms per worker):');
    expect(r.stdout).toContain(
      `warning RCTL_W_PROBE_NO_LOAD: --worker-queue-limit is set but 1 of 2 workers reports no load (${silent}); the gate will admit them blindly`,
    );
    expect(r.stdout).toMatch(
      new RegExp(`warning RCTL_W_PROBE_UNREACHABLE: worker ${down.replace(/[.:/]/g, '\\$&')} is unreachable: .*ECONNREFUSED`),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        `^ {2}${reporting.replace(/[.:/]/g, '\\$&')} +reachable +sglang +models: sim-llama-3.1-8b +load: /v1/loads \\(waiting 0\\) +dp-size 1$`,
        'm',
      ),
    );
  });

  it('fails with --strict, and reports the facts in --json', async () => {
    const r = await check(['--worker-urls', ...fleet.urls, '--worker-queue-limit', '4', '--probe', '--strict', '--json']);
    expect(r.code).toBe(1);
    const report = json(r.stdout);
    expect(report.valid).toBe(false);
    expect(report.probe?.workers.map((w) => [w.url, w.reachable, w.load === null])).toEqual([
      [fleet.urls[0], true, false],
      [fleet.urls[1], true, true],
    ]);
    expect(report.warnings.map((w) => w.code)).toEqual(['RCTL_W_PROBE_NO_LOAD']);
  });

  it('skips the probe when the configuration is invalid', async () => {
    const r = await check(['--worker-urls', ...fleet.urls, '--worker-queue-limit', '0', '--probe']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('probe skipped: fix the errors first');
  });
});
