/**
 * The performance suite's one entry point: `npm run perf -- <name> [flags]` builds
 * the project (the npm script does) and runs the named benchmark with the flags that
 * follow. Without a name, or with one the suite lacks, it lists the benchmarks. It
 * refuses a tree with uncommitted changes (BENCHMARKS.md, "Machine and method").
 *
 * Each benchmark runs as a child with its own node flags, so the runner adds nothing
 * to the process being measured; its exit status is the runner's.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PERF_BENCHMARKS } from './support/catalogue.js';
import { uncommittedChanges } from './support/results.js';

function listing(): string {
  const width = Math.max(...PERF_BENCHMARKS.map((b) => b.name.length));
  const rows = PERF_BENCHMARKS.map((b) => `  ${b.name.padEnd(width)}  ${b.measures}`);
  return [
    'usage: npm run perf -- <name> [flags]   (figures: BENCHMARKS.md; latest results: perf/results/<name>.json)',
    '',
    ...rows,
    '',
  ].join('\n');
}

const [name, ...given] = process.argv.slice(2);
/** `--dirty`: run on uncommitted changes, for a look; the results are then not written (writeResult). */
const dirty = given.includes('--dirty');
const flags = given.filter((f) => f !== '--dirty');
const chosen = PERF_BENCHMARKS.find((b) => b.name === name);

if (chosen === undefined) {
  const asked = name !== undefined && name !== '--help' && name !== '-h';
  if (asked) process.stderr.write(`no benchmark named "${name}"\n\n`);
  process.stdout.write(listing());
  process.exit(asked ? 2 : 0);
}

// A figure names the committed tree it came from: a tree with uncommitted changes is refused up front, not after a 20-minute run.
const changed = uncommittedChanges() ?? [];
if (changed.length > 0 && !dirty) {
  process.stderr.write(
    `perf: ${changed.length} tracked file(s) have uncommitted changes (${changed[0]!}${changed.length > 1 ? ', …' : ''}); ` +
      'commit or stash them so the results name the tree they came from, or add --dirty to run without writing perf/results\n',
  );
  process.exit(2);
}

const program = fileURLToPath(new URL(`./${chosen.file}`, import.meta.url));
const child = spawn(process.execPath, [...chosen.nodeFlags, program, ...flags], { stdio: 'inherit' });
// A terminal's Ctrl-C reaches the whole process group; a signal sent to the runner alone is passed on.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal === null) process.exit(code ?? 1);
  // End as the benchmark ended, so a caller sees the signal and not a made-up status.
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
