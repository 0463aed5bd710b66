import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commands } from '../../commands/index.js';
import { runCli } from '../helpers/cli.js';

const manDir = fileURLToPath(new URL('../../man/', import.meta.url));
const nameOf = (c: (typeof commands)[number]): string => String(c.command).split(' ')[0]!;
/** Every command module, internal ones included: each has a man page. */
const allCommands = commands.map(nameOf);
/** The commands --help and the overview page list (internal ones have `describe: false`). */
const commandNames = commands.filter((c) => c.describe !== false).map(nameOf);

/** Long options a --help screen lists, e.g. "--port-base". */
function helpOptions(help: string): string[] {
  return [...new Set([...help.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]!))];
}

/** roff escapes hyphens as \- ; undo it so option names can be searched. */
const roffText = (file: string): string => readFileSync(`${manDir}${file}`, 'utf8').replace(/\\-/g, '-');

describe('man pages', () => {
  it('exist for routerctl and for every command', () => {
    const pages = readdirSync(manDir);
    expect(commandNames).toEqual(['serve', 'top', 'explain', 'doctor', 'check-config', 'sim', 'bench']);
    expect(pages).toContain('routerctl.1');
    expect(allCommands).toEqual([...commandNames, 'embedded-fleet']);
    for (const name of allCommands) expect(pages).toContain(`routerctl-${name}.1`);
  });

  it.each(allCommands)('routerctl-%s.1 documents every option its --help lists', async (name) => {
    const help = await runCli([name, '--help']);
    expect(help.code).toBe(0);
    const page = roffText(`routerctl-${name}.1`);
    // --version is global and documented in routerctl.1.
    const missing = helpOptions(help.stdout).filter((opt) => opt !== '--version' && !page.includes(opt));
    expect(missing).toEqual([]);
  });

  it.each(['routerctl', ...allCommands.map((n) => `routerctl-${n}`)])('%s.1 renders with groff without warnings', (page) => {
    const out = execFileSync('groff', ['-man', '-ww', '-z', `${manDir}${page}.1`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).toBe('');
  });

  it('the overview page names every command', () => {
    const page = roffText('routerctl.1');
    for (const name of commandNames) expect(page).toMatch(new RegExp(`^\\.B ${name}$`, 'm'));
  });
});
