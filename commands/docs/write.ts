import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateDocs } from './generate.js';

/**
 * `npm run docs`: rewrite the generated parts of the man pages, docs/configuration.md
 * and .routerrc.example from the tables they describe, and name each file that
 * changed (the pre-written `--help` texts are the build's: build-help.ts). Run from the build
 * (dist/commands/docs/write.js), so the root is two folders above this one's parent.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));

const written: string[] = [];
for (const file of generateDocs(root)) {
  const at = `${root}${file.path}`;
  if (readFileSync(at, 'utf8') === file.text) continue;
  writeFileSync(at, file.text);
  process.stdout.write(`wrote ${file.path}\n`);
  written.push(file.path);
}
process.stdout.write(written.length === 0 ? 'docs: up to date\n' : `docs: ${written.length} file(s) rewritten\n`);
