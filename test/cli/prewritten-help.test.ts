import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { helpTexts } from '../../commands/registry/help-text.js';
import { HELP_FROM_YARGS_ENV, prewrittenHelp } from '../../commands/registry/prewritten-help.js';
import { BIN, runCli } from '../helpers/cli.js';
import type { CliResult } from '../helpers/cli.js';

/**
 * A plain `--help` is answered from the texts the build wrote (dist/help-text.json,
 * commands/registry/help-text.ts) without loading yargs (perf/start-up.ts times it).
 * It must print exactly what yargs prints, so each is run from the built binary both
 * ways: as an operator types it, and with ROUTERCTL_HELP_FROM_YARGS set, which sends it
 * to yargs. That the file is what yargs prints now is test/docs/generated-docs.test.ts's check.
 */
const HELP_TEXT = helpTexts() ?? {};
const KEYS = Object.keys(HELP_TEXT);
const FROM_YARGS = { [HELP_FROM_YARGS_ENV]: '1' };
const argvOf = (key: string, flag = '--help'): string[] => [...(key === '' ? [] : key.split(' ')), flag];

/** Both ways at once; each result must be a clean exit with nothing on stderr. */
async function bothWays(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ fast: CliResult; yargs: CliResult }> {
  const [fast, yargs] = await Promise.all([runCli(args, { env }), runCli(args, { env: { ...env, ...FROM_YARGS } })]);
  for (const r of [fast, yargs]) {
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  }
  return { fast, yargs };
}

describe('the pre-written --help (built binary)', () => {
  it('covers routerctl, every command and every bench subcommand', () => {
    expect(helpTexts(), 'dist/help-text.json is missing: npm run build').not.toBeNull();
    expect(KEYS).toEqual(
      expect.arrayContaining([
        '',
        'serve',
        'top',
        'explain',
        'doctor',
        'check-config',
        'sim',
        'bench',
        'bench run',
        'bench compare',
        'bench capture',
      ]),
    );
  });

  it.each(KEYS.flatMap((key) => ['--help', '-h'].map((flag) => [key, flag] as const)))(
    'routerctl %s %s prints byte for byte what yargs prints, and the committed text',
    async (key, flag) => {
      const { fast, yargs } = await bothWays(argvOf(key, flag));
      expect(fast.stdout).toBe(yargs.stdout);
      expect(fast.stdout, 'dist/help-text.json is older than the build: npm run build').toBe(HELP_TEXT[key]);
    },
  );

  // What yargs' words are in: the locale it guesses from LC_ALL, LC_MESSAGES, LANG, LANGUAGE (en_US when none is set).
  const NO_LOCALE = { LC_ALL: undefined, LC_MESSAGES: undefined, LANG: undefined, LANGUAGE: undefined };
  it.each([
    ['no locale set', NO_LOCALE],
    ['LC_ALL=C', { LC_ALL: 'C' }],
    ['LANG=C.UTF-8', { ...NO_LOCALE, LANG: 'C.UTF-8' }],
    ['LC_ALL=POSIX', { LC_ALL: 'POSIX' }],
    ['LC_ALL=en_GB.UTF-8', { LC_ALL: 'en_GB.UTF-8' }],
    ['LC_MESSAGES=en_US.UTF-8 LANG=de_DE.UTF-8', { ...NO_LOCALE, LC_MESSAGES: 'en_US.UTF-8', LANG: 'de_DE.UTF-8' }],
    ['NO_COLOR unset, FORCE_COLOR=1', { NO_COLOR: undefined, FORCE_COLOR: '1' }],
    ['NO_COLOR=1, TERM=dumb', { NO_COLOR: '1', TERM: 'dumb' }],
  ])('with %s, serve --help is the same bytes both ways', async (_name, env) => {
    const { fast, yargs } = await bothWays(['serve', '--help'], env);
    expect(fast.stdout).toBe(yargs.stdout);
    expect(fast.stdout).toBe(HELP_TEXT.serve);
  });

  it.each([
    ['LC_ALL=de_DE.UTF-8', { LC_ALL: 'de_DE.UTF-8' }],
    ['LANG=pt_BR.UTF-8', { LC_ALL: undefined, LC_MESSAGES: undefined, LANG: 'pt_BR.UTF-8' }],
  ])('with %s, where yargs translates its words, --help is left to yargs', async (_name, env) => {
    const { fast, yargs } = await bothWays(['serve', '--help'], env);
    expect(fast.stdout).toBe(yargs.stdout);
    expect(fast.stdout).not.toBe(HELP_TEXT.serve);
  });

  // `routerctl serve --help | head -1`: yargs prints with console.log, which ignores the reader gone, and so must the fast path.
  it.each([[['serve', '--help']], [['-h']], [['--version']]])(
    '%j into a pipe already closed exits 0 quietly, as yargs does',
    async (args) => {
      const [fast, yargs] = await Promise.all([intoClosedPipe(args, {}), intoClosedPipe(args, FROM_YARGS)]);
      expect(yargs).toEqual({ code: 0, stderr: '' });
      expect(fast).toEqual(yargs);
    },
  );

  it('loads neither yargs nor any package nor any command module', async () => {
    const fast = await withLoadTrace(['serve', '--help'], {});
    expect(fast.code).toBe(0);
    expect(fast.stdout).toBe(HELP_TEXT.serve);
    const loaded = loadedModules(fast.stderr);
    expect(loaded).toContain('dist/commands/registry/help-text.js');
    expect(loaded.filter((m) => m.includes('node_modules/'))).toEqual([]);
    expect(loaded.filter((m) => m.startsWith('dist/commands/') && !/^dist\/commands\/(index|registry\/[\w-]+)\.js$/.test(m))).toEqual([]);
    expect(loaded.filter((m) => m.startsWith('dist/src/') && !/^dist\/src\/(cli|errors)\//.test(m))).toEqual([]);
    // The trace sees what yargs' path loads, or the check above proves nothing.
    const yargs = loadedModules((await withLoadTrace(['serve', '--help'], FROM_YARGS)).stderr);
    expect(yargs.some((m) => m.includes('node_modules/yargs/'))).toBe(true);
    expect(yargs).toContain('dist/commands/serve.js');
  });
});

describe('prewrittenHelp: which argv it answers', () => {
  const env = { LC_ALL: 'en_US.UTF-8' };
  it.each([[['--help']], [['-h']], [['serve', '--help']], [['bench', 'compare', '-h']]])('%j', (argv) => {
    expect(prewrittenHelp(argv, env, undefined)).toBe(HELP_TEXT[argv.slice(0, -1).join(' ')]);
  });

  it.each([
    ['flags before --help', ['serve', '--port', '1', '--help']],
    ['--help not last', ['serve', '--help', '--port', '1']],
    ['no --help', ['serve']],
    ['no argv', []],
    ['an unknown command', ['nosuch', '--help']],
    ['a name an object has', ['constructor', '--help']],
    ['two words in one', ['bench run', '--help']],
    ['--version', ['--version']],
  ])('not %s', (_name, argv) => {
    expect(prewrittenHelp(argv, env, undefined)).toBeUndefined();
  });

  it('answers a pipe and a terminal 100 columns or wider, and leaves a narrower one to yargs', () => {
    expect(prewrittenHelp(['--help'], env, undefined)).toBe(HELP_TEXT['']);
    expect(prewrittenHelp(['--help'], env, 100)).toBe(HELP_TEXT['']);
    expect(prewrittenHelp(['--help'], env, 180)).toBe(HELP_TEXT['']);
    expect(prewrittenHelp(['--help'], env, 99)).toBeUndefined();
  });

  it(`leaves everything to yargs under ${HELP_FROM_YARGS_ENV}, but not when it is empty`, () => {
    // perf/start-up.ts names it too, to time the yargs way beside the pre-written one.
    expect(readFileSync(new URL('../../perf/start-up.ts', import.meta.url), 'utf8')).toContain(`${HELP_FROM_YARGS_ENV}: '1'`);
    expect(prewrittenHelp(['--help'], { ...env, ...FROM_YARGS }, undefined)).toBeUndefined();
    expect(prewrittenHelp(['--help'], { ...env, [HELP_FROM_YARGS_ENV]: '' }, undefined)).toBe(HELP_TEXT['']);
  });

  it.each([
    ['en_US.UTF-8', true],
    ['en', true],
    ['C.UTF-8', true],
    ['POSIX', true],
    ['de_DE.UTF-8', false],
    ['pirate', false],
    ['zh_CN', false],
  ])('LC_ALL=%s: %s', (locale, answers) => {
    expect(prewrittenHelp(['--help'], { LC_ALL: locale }, undefined) !== undefined).toBe(answers);
  });

  it('reads the locale in yargs order, an empty variable counting as unset', () => {
    expect(prewrittenHelp(['--help'], { LC_ALL: '', LC_MESSAGES: 'de_DE', LANG: 'en_US' }, undefined)).toBeUndefined();
    expect(prewrittenHelp(['--help'], { LC_MESSAGES: 'en_US', LANG: 'de_DE' }, undefined)).toBeDefined();
    expect(prewrittenHelp(['--help'], { LANGUAGE: 'fr' }, undefined)).toBeUndefined();
    expect(prewrittenHelp(['--help'], {}, undefined)).toBeDefined();
  });
});

/**
 * A module hook (node --import) that names every module the process resolves, on
 * stderr: what a `--help` loaded, not how long it took.
 */
const TRACE_HOOK = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module';
   register('data:text/javascript,' + encodeURIComponent(
     'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("loaded " + r.url + "\\\\n"); return r; }'));`,
)}`;

function withLoadTrace(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TRACE_HOOK, BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Exit status and stderr of a run whose stdout's reader is gone before it writes. */
function intoClosedPipe(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** The traced modules of the repository, relative to it (node_modules included), without node: built-ins. */
function loadedModules(stderr: string): string[] {
  const root = new URL('../../', import.meta.url).href;
  return [...stderr.matchAll(/^loaded (\S+)$/gm)]
    .map((m) => m[1]!)
    .filter((u) => u.startsWith(root))
    .map((u) => u.slice(root.length));
}
