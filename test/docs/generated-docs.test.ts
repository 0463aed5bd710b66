import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateDocs } from '../../commands/docs/generate.js';
import { replaceBlock } from '../../commands/docs/generated-block.js';
import { helpPaths, yargsHelp } from '../../commands/docs/help-module.js';
import { HELP_TEXT_FILE } from '../../commands/registry/help-text.js';
import { OPTIONS } from '../../src/config/index.js';
import type { OptionSpec } from '../../src/config/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The man pages' OPTIONS and ERRORS, docs/configuration.md's flag and code tables and
 * .routerrc.example are written by `npm run docs` from OPTIONS, the commands' option
 * tables and the error catalogues. Regenerated here in memory, they must equal the
 * files: a default, a flag or a code changed without `npm run docs` fails.
 */
describe('generated docs (npm run docs)', () => {
  const files = generateDocs(ROOT);

  it('cover every man page with a command table, configuration.md and the rc example', () => {
    expect(files.map((f) => f.path)).toEqual(
      expect.arrayContaining(['man/routerctl-serve.1', 'man/routerctl-check-config.1', 'docs/configuration.md', '.routerrc.example']),
    );
  });

  it.each(files.map((f) => f.path))('%s is as npm run docs writes it', (file) => {
    const want = files.find((f) => f.path === file)!.text;
    expect(readFileSync(path.join(ROOT, file), 'utf8'), `${file} differs from its sources: run npm run docs`).toBe(want);
  });

  // The pre-written --help texts are the build's (npm test builds first): each is what the built binary's yargs prints,
  // so a build that skipped the step, or a text left from an older build, fails here and not only in the terminal.
  it(`${HELP_TEXT_FILE} is what yargs prints for every --help, as npm run build writes it`, async () => {
    const written = JSON.parse(readFileSync(path.join(ROOT, HELP_TEXT_FILE), 'utf8')) as Record<string, string>;
    const paths = helpPaths();
    expect(Object.keys(written).sort()).toEqual(paths.map((w) => w.join(' ')).sort());
    for (const words of paths) expect(written[words.join(' ')], `${HELP_TEXT_FILE}: npm run build`).toBe(await yargsHelp(ROOT, words));
  }, 60_000);

  it('fail when a default in OPTIONS changes without the docs', () => {
    const spec = OPTIONS.find((o) => o.key === 'cbThreshold') as OptionSpec<'cbThreshold'>;
    const kept = spec.default;
    try {
      (spec as { default: number }).default = kept + 1;
      const changed = generateDocs(ROOT).filter((f) => f.text !== readFileSync(path.join(ROOT, f.path), 'utf8'));
      expect(changed.map((f) => f.path)).toEqual(
        expect.arrayContaining(['man/routerctl-serve.1', 'man/routerctl-check-config.1', 'docs/configuration.md', '.routerrc.example']),
      );
    } finally {
      (spec as { default: number }).default = kept;
    }
  });

  it('refuse a file that lost its markers instead of skipping it', () => {
    expect(() => replaceBlock('no markers here\n', 'x.1', 'roff', 'OPTIONS', 'body')).toThrow(/x\.1: no generated block OPTIONS/);
  });
});
