import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import { emptyDir, parseFlags } from './support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await emptyDir());
});
afterEach(async () => cleanup());

const rc = (text: string, name = '.routerrc') => writeFile(path.join(dir, name), text);
const resolve = async (args: string[], env: NodeJS.ProcessEnv = {}, cwd = dir) => resolveConfig({ argv: await parseFlags(args), env, cwd });

describe('precedence: flags > ROUTERCTL_* env > rc file > defaults', () => {
  it.each([
    ['flag', ['--worker-queue-limit', '6'], { ROUTERCTL_WORKER_QUEUE_LIMIT: '7' }, 6, 'flag'],
    ['env', [], { ROUTERCTL_WORKER_QUEUE_LIMIT: '7' }, 7, 'env ROUTERCTL_WORKER_QUEUE_LIMIT'],
    ['rc', [], {}, 9, '.routerrc:worker-queue-limit'],
  ] as const)('%s wins over everything below it', async (_source, args, env, value, origin) => {
    await rc('worker-queue-limit: 9\n');
    const r = await resolve([...args], { ...env });
    expect(r.config.workerQueueLimit).toBe(value);
    expect(r.origins.workerQueueLimit.label).toBe(origin);
  });

  it('uses the default when no source sets a value, and says so', async () => {
    const r = await resolve([]);
    expect(r.config.minLoadChoices).toBe(2);
    expect(r.origins.minLoadChoices).toEqual({ source: 'default', label: 'default' });
    expect(r.rcFile).toBeUndefined();
  });

  it('judges only the winning value: a flag overrides a bad rc value', async () => {
    await rc('worker-queue-limit: 0\n');
    const r = await resolve(['--worker-queue-limit', '4']);
    expect(r.errors).toEqual([]);
    expect(r.config.workerQueueLimit).toBe(4);
  });

  it('still reports an unreadable rc value that a flag overrides (the file itself is wrong)', async () => {
    await rc('worker-queue-limit: lots\n');
    const r = await resolve(['--worker-queue-limit', '4']);
    expect(r.errors).toMatchObject([{ code: 'RCTL_E_PARSE_NOT_A_NUMBER', origin: '.routerrc:worker-queue-limit' }]);
    expect(r.config.workerQueueLimit).toBe(4);
  });

  it('falls back to a lower source when a higher one cannot be parsed', async () => {
    await rc('worker-queue-limit: 9\n');
    const r = await resolve([], { ROUTERCTL_WORKER_QUEUE_LIMIT: 'many' });
    expect(r.errors).toMatchObject([{ code: 'RCTL_E_PARSE_NOT_A_NUMBER', origin: 'env ROUTERCTL_WORKER_QUEUE_LIMIT' }]);
    expect(r.config.workerQueueLimit).toBe(9);
  });

  it('names the rc file and key when an rc value is wrong', async () => {
    await rc('workerQueueLimit: 0\n');
    const r = await resolve([]);
    expect(r.errors).toMatchObject([
      {
        code: 'RCTL_E_VALUE_RANGE',
        message: '--worker-queue-limit must be at least 1',
        flag: '--worker-queue-limit',
        origin: '.routerrc:workerQueueLimit',
      },
    ]);
  });
});

describe('rc file keys and values', () => {
  it('accepts kebab-case and camelCase keys, with YAML types', async () => {
    await rc(
      'policy: cache_aware\nworkerQueueLimit: 4\nsaturation-queue-floor: "2"\ndisablePressureGuard: true\nworker-urls:\n  - http://a:1/\n  - http://b:1\n',
    );
    const r = await resolve([]);
    expect(r.errors).toEqual([]);
    expect(r.config).toMatchObject({
      workerQueueLimit: 4,
      saturationQueueFloor: 2,
      disablePressureGuard: true,
      workerUrls: ['http://a:1', 'http://b:1'],
    });
    expect(r.origins.workerUrls.label).toBe('.routerrc:worker-urls');
  });

  it('reads JSON in an extensionless .routerrc', async () => {
    await rc('{"policy": "power_of_n", "power-of-n-choices": 3}');
    const r = await resolve([]);
    expect(r.errors).toEqual([]);
    expect(r.config).toMatchObject({ policy: 'power_of_n', powerOfNChoices: 3 });
  });

  it('treats a key with no value as unset', async () => {
    await rc('worker-queue-limit:\nsaturation-queue-floor: ~\n');
    const r = await resolve([]);
    expect(r.errors).toEqual([]);
    expect(r.config.workerQueueLimit).toBeNull();
    expect(r.origins.workerQueueLimit.source).toBe('default');
  });

  it('rejects an unknown key with a did-you-mean', async () => {
    await rc('worker-queue-limt: 4\n');
    const r = await resolve([]);
    expect(r.errors).toMatchObject([
      {
        code: 'RCTL_E_PARSE_UNKNOWN_KEY',
        class: 'parse',
        message: 'unknown key worker-queue-limt in .routerrc; did you mean worker-queue-limit?',
        origin: '.routerrc:worker-queue-limt',
      },
    ]);
  });

  it('explains a Rust router key that routerctl does not have, and refuses config inside an rc file', async () => {
    await rc('cache-threshold: 0.5\nconfig: other.yaml\n');
    const r = await resolve([]);
    expect(r.errors.map((e) => e.message)).toEqual([
      'unknown key cache-threshold in .routerrc; removed from the reference router; use --cache-affinity-min-match-ratio',
      'unknown key config in .routerrc; an rc file cannot point to another one (use $import)',
    ]);
  });

  it('rejects a key given in both spellings', async () => {
    await rc('worker-queue-limit: 4\nworkerQueueLimit: 5\n');
    const r = await resolve([]);
    expect(r.errors).toMatchObject([{ code: 'RCTL_E_PARSE_DUPLICATE_KEY', flag: '--worker-queue-limit' }]);
    expect(r.config.workerQueueLimit).toBe(4);
  });

  it.each([
    [
      'a list for a number',
      'worker-queue-limit: [4]\n',
      'RCTL_E_PARSE_INVALID_TYPE',
      'invalid value for --worker-queue-limit: expected an integer, got a list',
    ],
    [
      'a mapping for a string',
      'model-id: {a: 1}\n',
      'RCTL_E_PARSE_INVALID_TYPE',
      'invalid value for --model-id: expected a string, got a mapping',
    ],
    ['a word for a boolean', 'tui: maybe\n', 'RCTL_E_PARSE_INVALID_BOOLEAN', "invalid value 'maybe' for --tui: expected true or false"],
    [
      'a number in a URL list',
      'worker-urls: [8000]\n',
      'RCTL_E_PARSE_INVALID_TYPE',
      'invalid value for --worker-urls: expected a list of URLs, got number 8000',
    ],
    [
      'an unknown policy',
      'policy: fastest\n',
      'RCTL_E_PARSE_INVALID_CHOICE',
      "invalid value 'fastest' for --policy: expected one of round_robin, random, power_of_n, cache_aware",
    ],
  ])('reports %s as a parse problem at its key', async (_name, text, code, message) => {
    await rc(text);
    const r = await resolve([]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ code, message, class: 'parse' });
    expect(r.errors[0]!.origin).toMatch(/^\.routerrc:/);
  });
});

describe('environment', () => {
  it('reads every setting from ROUTERCTL_<FLAG>', async () => {
    const r = await resolve([], {
      ROUTERCTL_POLICY: 'power_of_n',
      ROUTERCTL_POWER_OF_N_CHOICES: '4',
      ROUTERCTL_WORKER_URLS: 'http://a:1, http://b:1 http://c:1',
      ROUTERCTL_TUI: 'false',
      ROUTERCTL_ADMIN_TOKEN: 's3cret',
      ROUTERCTL_PRESSURE_REL_THRESHOLD: '',
    });
    expect(r.errors).toEqual([]);
    expect(r.config).toMatchObject({
      policy: 'power_of_n',
      powerOfNChoices: 4,
      workerUrls: ['http://a:1', 'http://b:1', 'http://c:1'],
      tui: false,
      adminToken: 's3cret',
    });
    expect(r.origins.tui.label).toBe('env ROUTERCTL_TUI');
    // An empty variable is unset.
    expect(r.origins.pressureRelThreshold.source).toBe('default');
  });

  it('rejects a word that is not a boolean', async () => {
    const r = await resolve([], { ROUTERCTL_DISABLE_PRESSURE_GUARD: 'sometimes' });
    expect(r.errors).toMatchObject([{ code: 'RCTL_E_PARSE_INVALID_BOOLEAN', origin: 'env ROUTERCTL_DISABLE_PRESSURE_GUARD' }]);
  });

  it('takes the rc path from ROUTERCTL_CONFIG', async () => {
    await writeFile(path.join(dir, 'fleet.yaml'), 'worker-queue-limit: 3\n');
    const r = await resolve([], { ROUTERCTL_CONFIG: 'fleet.yaml' });
    expect(r.config.workerQueueLimit).toBe(3);
    expect(r.rcFile).toBe(path.join(dir, 'fleet.yaml'));
  });
});

describe('flags through yargs', () => {
  it('--no-tui sets tui to false from the flag', async () => {
    const r = await resolve(['--no-tui']);
    expect(r.config.tui).toBe(false);
    expect(r.origins.tui.label).toBe('flag');
  });

  it('camelCase flags are the same setting', async () => {
    const r = await resolve(['--workerQueueLimit', '5']);
    expect(r.errors).toEqual([]);
    expect(r.config.workerQueueLimit).toBe(5);
  });

  it('the last of a repeated scalar flag wins', async () => {
    const r = await resolve(['--worker-queue-limit', '4', '--worker-queue-limit', '6']);
    expect(r.config.workerQueueLimit).toBe(6);
  });

  it('keeps leading zeros in strings (no number parsing for text settings)', async () => {
    const r = await resolve(['--model-id', '007']);
    expect(r.config.modelId).toBe('007');
  });

  it("drops the command word and ignores the command's own flags", async () => {
    const argv = { ...(await parseFlags(['--json', '--worker-queue-limit', '4'])), _: ['check-config'] };
    const r = await resolveConfig({ argv, env: {}, cwd: dir, ignore: ['json'] });
    expect(r.errors).toEqual([]);
    expect(r.config.workerQueueLimit).toBe(4);
  });

  it('--config overrides the search', async () => {
    await rc('worker-queue-limit: 9\n');
    await mkdir(path.join(dir, 'conf'));
    await writeFile(path.join(dir, 'conf', 'prod.yml'), 'worker-queue-limit: 2\n');
    const r = await resolve(['--config', 'conf/prod.yml']);
    expect(r.config.workerQueueLimit).toBe(2);
    expect(r.origins.workerQueueLimit.label).toBe('conf/prod.yml:worker-queue-limit');
  });

  it('--config with no path is a parse problem', async () => {
    const r = await resolve(['--config']);
    expect(r.errors).toMatchObject([{ code: 'RCTL_E_PARSE_MISSING_VALUE', message: '--config needs a path' }]);
  });
});
