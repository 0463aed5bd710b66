import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The package version, read once from package.json (two levels above dist/src/cli). */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'routerctl' && typeof pkg.version === 'string') {
        cached = pkg.version;
        return cached;
      }
    } catch {
      // try the next candidate: the layout differs between dist/ and vitest's source run
    }
  }
  cached = '0.0.0';
  return cached;
}
