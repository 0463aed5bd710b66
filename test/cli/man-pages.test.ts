import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commands } from '../../commands/registry/command-list.js';
import { generateDocs } from '../../commands/docs/generate.js';

const manDir = fileURLToPath(new URL('../../man/', import.meta.url));
const nameOf = (c: (typeof commands)[number]): string => String(c.command).split(' ')[0]!;
/** Every command module, internal ones included: each has a man page. */
const allCommands = commands.map(nameOf);
/** The commands --help and the overview page list (internal ones have `describe: false`). */
const commandNames = commands.filter((c) => c.describe !== false).map(nameOf);

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

  // OPTIONS and ERRORS are written by npm run docs from the tables the commands' builders read (test/docs/generated-docs.test.ts
  // compares every generated file); here: every command's page has them, except the internal embedded-fleet, which has no table.
  const generated = generateDocs(fileURLToPath(new URL('../../', import.meta.url)));
  it.each(allCommands)('routerctl-%s.1 has OPTIONS written by npm run docs, and is up to date', (name) => {
    const page = generated.find((f) => f.path === `man/routerctl-${name}.1`);
    if (name === 'embedded-fleet') return expect(page?.text ?? '').not.toContain('BEGIN GENERATED OPTIONS');
    expect(page?.text).toContain('.\\" BEGIN GENERATED OPTIONS');
    expect(readFileSync(`${manDir}routerctl-${name}.1`, 'utf8')).toBe(page?.text);
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
