import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(repoRoot, 'bin/routerctl.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The CLI tests run the built binary, as operators do. A stale dist/ would test old
 * code and pass or fail for the wrong reason, so refuse to run against one.
 */
export function assertBuilt(): void {
  const sources = [
    ...readdirSync(path.join(repoRoot, 'src/config')).map((f) => `src/config/${f}`),
    'commands/check-config.ts',
    'commands/index.ts',
  ].filter((f) => f.endsWith('.ts'));
  for (const src of sources) {
    const out = path.join(repoRoot, 'dist', src.replace(/\.ts$/, '.js'));
    if (!existsSync(out) || statSync(out).mtimeMs < statSync(path.join(repoRoot, src)).mtimeMs) {
      throw new Error(`dist/ is missing or older than ${src}: run npx tsc -p . first (npm test does)`);
    }
  }
}

/**
 * Run `routerctl ARGS` in `cwd` with a clean environment: no ROUTERCTL_* from the
 * caller, and HOME/XDG_CONFIG_HOME pointed at `home` so no rc file of the machine's
 * user is found.
 */
export function runCli(
  args: readonly string[],
  options: { cwd: string; home: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ROUTERCTL_') && k !== 'NO_COLOR') env[k] = v;
  Object.assign(env, { HOME: options.home, XDG_CONFIG_HOME: path.join(options.home, '.config'), FORCE_COLOR: '0' }, options.env);
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: options.cwd, env, timeout: options.timeoutMs ?? 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
