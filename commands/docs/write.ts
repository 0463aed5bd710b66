import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateDocs } from './generate.js';
import { HELP_MODULE_PATH, generateHelpModule } from './help-module.js';

/**
 * `npm run docs`: rewrite the generated parts of the man pages, docs/configuration.md
 * and .routerrc.example from the tables they describe, and the pre-written `--help`
 * texts from what yargs prints, and name each file that changed. Run from the build
 * (dist/commands/docs/write.js), so the root is two folders above this one's parent.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));

const written: string[] = [];
for (const file of [...generateDocs(root), await generateHelpModule(root)]) {
  const at = `${root}${file.path}`;
  if (readFileSync(at, 'utf8') === file.text) continue;
  writeFileSync(at, file.text);
  process.stdout.write(`wrote ${file.path}\n`);
  written.push(file.path);
}
// The binary prints the help texts from the build: build again, or it prints the old ones.
if (written.includes(HELP_MODULE_PATH)) {
  process.stdout.write('building again for the new help texts\n');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
}
process.stdout.write(written.length === 0 ? 'docs: up to date\n' : `docs: ${written.length} file(s) rewritten\n`);
