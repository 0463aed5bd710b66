import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HELP_TEXT_FILE } from '../registry/help-text.js';
import { helpPaths, yargsHelp } from './help-module.js';

/**
 * The build's last step (`npm run build`, after tsc): every `--help` run through yargs
 * into a pipe, its bytes written to dist/help-text.json, which `main` prints without
 * loading yargs (commands/registry/prewritten-help.ts). Produced by the build, so it is
 * never out of date with the option tables it comes from, and never committed.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const paths = helpPaths();
const texts = await Promise.all(paths.map((words) => yargsHelp(root, words)));
writeFileSync(
  `${root}${HELP_TEXT_FILE}`,
  `${JSON.stringify(Object.fromEntries(paths.map((w, i) => [w.join(' '), texts[i]!])), null, 1)}\n`,
);
