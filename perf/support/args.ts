/** The value after `--name` on the bench's command line, or `dflt` when it is absent or last. */
export function benchArg(name: string, dflt: string): string {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
}

/** The space-separated words after `--name` (flags for a process the bench starts), or `dflt`'s. */
export function benchWords(name: string, dflt = ''): string[] {
  return benchArg(name, dflt).split(/\s+/).filter(Boolean);
}
