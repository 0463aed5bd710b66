import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yargs from 'yargs';
import { addConfigOptions, resolveConfig } from '../../src/config/index.js';
import type { ResolvedConfig } from '../../src/config/index.js';

/** Parse a command line the way serve and check-config do: through the shared yargs options. */
export async function parseFlags(args: readonly string[]): Promise<Record<string, unknown>> {
  return (await addConfigOptions(yargs([...args]))
    .exitProcess(false)
    .parseAsync()) as Record<string, unknown>;
}

/** A fresh empty folder, so no rc file from the machine leaks into a test. */
export async function emptyDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'routerctl-config-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Resolve a command line with no environment and no rc file. */
export async function resolveArgs(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<ResolvedConfig> {
  const own = options.cwd === undefined ? await emptyDir() : null;
  try {
    return await resolveConfig({ argv: await parseFlags(args), env: options.env ?? {}, cwd: options.cwd ?? own!.dir });
  } finally {
    await own?.cleanup();
  }
}

/**
 * A fresh folder per test with helpers to write files in it and resolve a
 * configuration from one of its subfolders (vitest beforeEach/afterEach hooks).
 */
export function rcSandbox(hooks: { beforeEach: (fn: () => Promise<void>) => void; afterEach: (fn: () => Promise<void>) => void }): {
  dir: () => string;
  write: (rel: string, text: string) => Promise<void>;
  resolveIn: (rel?: string, configPath?: string) => Promise<ResolvedConfig>;
} {
  let dir = '';
  let cleanup: () => Promise<void> = async () => {};
  hooks.beforeEach(async () => {
    ({ dir, cleanup } = await emptyDir());
  });
  hooks.afterEach(async () => cleanup());
  return {
    dir: () => dir,
    write: async (rel, text) => {
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await writeFile(path.join(dir, rel), text);
    },
    resolveIn: (rel = '.', configPath?: string) =>
      resolveConfig({ argv: {}, env: {}, cwd: path.join(dir, rel), ...(configPath === undefined ? {} : { configPath }) }),
  };
}
