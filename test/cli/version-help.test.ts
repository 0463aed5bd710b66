import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../commands/registry/command-list.js';
import { runCli } from '../helpers/cli.js';

/**
 * `--version` and every `--help`, from the built binary: what they print, now that
 * `--version` and a plain `--help` answer before yargs loads and each command loads its
 * implementation only in its handler (issue 31 item 4). That the pre-written `--help` is
 * yargs' own, byte for byte, is prewritten-help.test.ts's to show; how long they take is
 * perf/start-up.ts's to measure, not a test's.
 */
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('routerctl --version (built binary)', () => {
  it.each([['--version'], ['-V'], ['serve', '--version'], ['bench', 'run', '--version']])(
    '%s %s prints the package version alone',
    async (...args) => {
      const r = await runCli(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${VERSION}\n`);
      expect(r.stderr).toBe('');
    },
  );
});

describe('routerctl --help (built binary)', () => {
  it('lists every command', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^routerctl <command> \[options\]/);
    for (const c of ['serve', 'top', 'explain', 'doctor', 'check-config', 'sim', 'bench'])
      expect(r.stdout).toMatch(new RegExp(`^  routerctl ${c}\\b`, 'm'));
    expect(r.stdout).toContain('-V, --version');
  });

  // Each command's usage line and a flag of its own table: the builder ran, the handler did not.
  it.each([
    [['serve'], /^routerctl serve \[settings\]/, '--worker-queue-limit'],
    [['check-config'], /^routerctl check-config \[settings\]/, '--probe'],
    [['top'], /^routerctl top\b/, '--once'],
    [['explain'], /^routerctl explain\b/, '--request'],
    [['doctor'], /^routerctl doctor\b/, '--file'],
    [['sim'], /^routerctl sim\b/, '--port-base'],
    [['bench'], /^routerctl bench\b/, 'routerctl bench compare'],
    [['bench', 'run'], /^routerctl bench run\b/, '--url'],
    [['bench', 'compare'], /^routerctl bench compare\b/, '--sweep'],
    [['bench', 'capture'], /^routerctl bench capture\b/, '--token'],
  ])('%s --help prints its usage and its own flags, and runs nothing', async (command, usage, flag) => {
    const r = await runCli([...command, '--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(usage);
    expect(r.stdout).toContain(flag);
  });
});

describe('the command list yargs matches against', () => {
  // It names each command without loading it; the module, loaded when run, must agree.
  it.each(commands.map((c) => [String(c.command), c] as const))('%s is named and described as its module', async (name, listed) => {
    const file = `../../commands/${name}.js`;
    const own = ((await import(file)) as { default: { command: unknown; describe: unknown } }).default;
    expect(own.command).toBe(listed.command);
    expect(own.describe).toBe(listed.describe);
  });
});
