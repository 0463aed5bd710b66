import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built binary, as a user runs it (npm test builds before vitest runs). */
export const BIN = fileURLToPath(new URL('../../bin/routerctl.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run routerctl to completion (bounded by timeoutMs, then killed). */
export function runCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: '1', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout text matching `re`. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit status (kills after timeoutMs). */
  exited(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Start a long-running routerctl command (serve, sim, top) for a test to drive. */
export function startCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor(re, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const m = out.match(re);
          if (m) {
            cleanup();
            resolve(m);
            return true;
          }
          return false;
        };
        const onData = (): void => void check();
        const onClose = (): void => {
          cleanup();
          reject(new Error(`process exited before ${re}; stderr: ${err}`));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${re}; stdout: ${out}; stderr: ${err}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          child.stdout.off('data', onData);
          child.off('close', onClose);
        };
        if (check()) return;
        child.stdout.on('data', onData);
        child.on('close', onClose);
      });
    },
    exited(timeoutMs = 10_000) {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      return exit.finally(() => clearTimeout(timer));
    },
  };
}
