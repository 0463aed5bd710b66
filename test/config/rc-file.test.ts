import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPTIONS, RC_SEARCH_PLACES, defaultConfig, resolveConfig } from '../../src/config/index.js';
import { formatDefault } from '../../src/config/yargs-options.js';
import { emptyDir } from './support.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await emptyDir());
});
afterEach(async () => cleanup());

const write = async (rel: string, text: string) => {
  await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
  await writeFile(path.join(dir, rel), text);
};
const resolveIn = (rel = '.', configPath?: string) =>
  resolveConfig({ argv: {}, env: {}, cwd: path.join(dir, rel), ...(configPath === undefined ? {} : { configPath }) });

describe('finding the rc file', () => {
  it('searches the documented places in order', () => {
    expect(RC_SEARCH_PLACES).toEqual([
      '.routerrc',
      '.routerrc.json',
      '.routerrc.yaml',
      '.routerrc.yml',
      'routerctl.config.js',
      'routerctl.config.mjs',
      'routerctl.config.cjs',
      'package.json',
    ]);
  });

  it('walks up from the cwd to a parent folder', async () => {
    await write('.routerrc', 'worker-queue-limit: 5\n');
    await mkdir(path.join(dir, 'a/b/c'), { recursive: true });
    const r = await resolveIn('a/b/c');
    expect(r.config.workerQueueLimit).toBe(5);
    expect(r.rcFile).toBe(path.join(dir, '.routerrc'));
    expect(r.origins.workerQueueLimit.label).toBe(path.join('..', '..', '..', '.routerrc') + ':worker-queue-limit');
  });

  it('takes the nearest folder first', async () => {
    await write('.routerrc', 'worker-queue-limit: 5\n');
    await write('sub/.routerrc.yml', 'worker-queue-limit: 7\n');
    const r = await resolveIn('sub');
    expect(r.config.workerQueueLimit).toBe(7);
  });

  it.each([
    ['.routerrc.json', '{"worker-queue-limit": 3}'],
    ['.routerrc.yaml', 'worker-queue-limit: 3\n'],
    ['.routerrc.yml', 'workerQueueLimit: 3\n'],
    ['routerctl.config.js', 'export default { workerQueueLimit: 3 };\n'],
    ['routerctl.config.mjs', 'export default { "worker-queue-limit": 3 };\n'],
    ['routerctl.config.cjs', 'module.exports = { workerQueueLimit: 3 };\n'],
    ['package.json', '{"name": "x", "type": "module", "routerctl": {"worker-queue-limit": 3}}'],
  ])('reads %s', async (name, text) => {
    await write(name, text);
    const r = await resolveIn();
    expect(r.errors).toEqual([]);
    expect(r.config.workerQueueLimit).toBe(3);
    expect(r.origins.workerQueueLimit.label).toMatch(new RegExp(`^${name.replace(/\./g, '\\.')}:(routerctl\\.)?`));
  });

  it('skips a package.json without a routerctl key', async () => {
    await write('package.json', '{"name": "x"}');
    const r = await resolveIn();
    expect(r.rcFile).toBeUndefined();
    expect(r.errors).toEqual([]);
  });

  it('prefers .routerrc over package.json in the same folder, and warns about the shadowed one', async () => {
    await write('.routerrc', 'worker-queue-limit: 5\n');
    await write('package.json', '{"routerctl": {"worker-queue-limit": 9}}');
    await write('.routerrc.yaml', 'worker-queue-limit: 8\n');
    const r = await resolveIn();
    expect(r.config.workerQueueLimit).toBe(5);
    expect(r.warnings).toMatchObject([
      {
        code: 'RCTL_W_MULTIPLE_RC_FILES',
        message: '.routerrc shadows .routerrc.yaml, package.json#routerctl in the same folder; only .routerrc is read',
      },
    ]);
  });

  it('reports an explicit package.json without a routerctl key', async () => {
    await write('package.json', '{"name": "x"}');
    const r = await resolveIn('.', 'package.json');
    expect(r.errors).toMatchObject([{ code: 'RCTL_E_PARSE_RC_SHAPE', message: 'package.json has no "routerctl" key' }]);
  });

  it('reports a missing --config file', async () => {
    const r = await resolveIn('.', 'nope.yaml');
    expect(r.errors).toMatchObject([
      { code: 'RCTL_E_PARSE_RC_NOT_FOUND', message: 'cannot read --config nope.yaml: no such file', flag: '--config' },
    ]);
  });

  it('refuses TypeScript config files (loading them would write a file)', async () => {
    await write('routerctl.config.ts', 'export default {}\n');
    const r = await resolveIn('.', 'routerctl.config.ts');
    expect(r.errors).toMatchObject([{ code: 'RCTL_E_PARSE_RC_SYNTAX' }]);
    expect(r.errors[0]!.message).toContain('TypeScript config files are not supported');
  });
});

describe('broken rc files: one line, the file and the position', () => {
  it.each([
    [
      '.routerrc',
      'policy: cache_aware\n  worker-queue-limit: 4\n',
      'cannot parse .routerrc: bad indentation of a mapping entry (line 2, column 21)',
    ],
    [
      '.routerrc.yaml',
      'worker-urls: [http://a:1\n',
      'cannot parse .routerrc.yaml: unexpected end of the stream within a flow collection (line 2, column 1)',
    ],
    [
      '.routerrc.json',
      '{\n  "worker-queue-limit": 4,\n  "policy": cache_aware\n}\n',
      "cannot parse .routerrc.json: unexpected 'c', expected a value (line 3, column 13)",
    ],
    [
      '.routerrc.json',
      '{\n  "worker-queue-limit": 4,\n}\n',
      "cannot parse .routerrc.json: unexpected '}', expected a property name (no trailing comma in JSON) (line 3, column 1)",
    ],
    [
      '.routerrc.json',
      '{"policy": "cache_aware"',
      "cannot parse .routerrc.json: unexpected end of input, expected ',' or '}' (line 1, column 25)",
    ],
    [
      'package.json',
      '{"routerctl": {"policy": "random",}}',
      "cannot parse package.json: unexpected '}', expected a property name (no trailing comma in JSON) (line 1, column 35)",
    ],
  ])('%s %#', async (name, text, message) => {
    await write(name, text);
    const r = await resolveIn();
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ code: 'RCTL_E_PARSE_RC_SYNTAX', class: 'parse', message, flag: null });
    expect(r.errors[0]!.message).not.toContain('\n');
  });

  it('a broken rc file in a parent folder is named by its relative path', async () => {
    await write('.routerrc', 'a: [\n');
    await mkdir(path.join(dir, 'x'));
    const r = await resolveIn('x');
    expect(r.errors[0]!.message).toMatch(/^cannot parse \.\.\/\.routerrc: .* \(line 2, column 1\)$/);
  });

  it('a JS config that throws names the file and line', async () => {
    await write('routerctl.config.mjs', 'const limit = 4;\nthrow new Error("no fleet named prod");\nexport default { limit };\n');
    const r = await resolveIn();
    expect(r.errors).toMatchObject([
      { code: 'RCTL_E_PARSE_RC_SYNTAX', message: 'cannot load routerctl.config.mjs: no fleet named prod (line 2, column 7)' },
    ]);
  });

  it('an rc file that is not a mapping', async () => {
    await write('.routerrc', '- 1\n- 2\n');
    const r = await resolveIn();
    expect(r.errors).toMatchObject([
      { code: 'RCTL_E_PARSE_RC_SHAPE', message: '.routerrc must hold a mapping of settings to values, found a list' },
    ]);
  });

  it('an empty rc file is an empty configuration', async () => {
    await write('empty.yaml', '\n');
    const r = await resolveIn('.', 'empty.yaml');
    expect(r.errors).toEqual([]);
  });
});

describe('.routerrc.example', () => {
  const examplePath = path.join(repoRoot, '.routerrc.example');

  it('passes check-config', async () => {
    const r = await resolveConfig({ argv: {}, env: {}, cwd: repoRoot, configPath: examplePath });
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
  });

  it('documents every key, and every active line restates its default', async () => {
    const text = await readFile(examplePath, 'utf8');
    const lines = text.split('\n');
    const r = await resolveConfig({ argv: {}, env: {}, cwd: repoRoot, configPath: examplePath });
    const defaults = defaultConfig();
    for (const o of OPTIONS) {
      const at = lines.findIndex((l) => new RegExp(`^(# )?${o.flag}:`).test(l));
      expect(at, `${o.flag} is documented`).toBeGreaterThan(0);
      expect(lines[at - 1], `${o.flag} has a comment above it`).toMatch(/^#/);
      // The comment block above the key states the default.
      let k = at - 1;
      while (k > 0 && lines[k - 1]!.startsWith('#') && !/^# (?:\S+:|---)/.test(lines[k]!)) k--;
      const comment = lines.slice(k, at).join(' ');
      expect(comment, `${o.flag} states its default`).toMatch(/Default:/);
      if (o.default !== null && !Array.isArray(o.default)) expect(comment, o.flag).toContain(`Default: ${formatDefault(o.default)}`);
      if (!lines[at]!.startsWith('#')) {
        expect(r.config[o.key], o.flag).toEqual(defaults[o.key]);
        expect(r.origins[o.key].source, o.flag).toBe('rc');
      }
    }
  });
});
