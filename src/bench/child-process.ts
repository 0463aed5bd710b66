import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { routerctlBin } from './routerctl-bin.js';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * Whatever happens to the benchmark (an exception, process.exit, a signal it turns
 * into an exit), no fleet or router it started may outlive it.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

export interface RouterctlChild {
  readonly child: ChildProcess;
  readonly label: string;
  /** Resolves with the first stdout line that `accept` returns a value for. */
  firstLine<T>(accept: (line: string) => T | undefined, timeoutMs: number): Promise<T>;
  /** The last lines the process wrote to stderr, for an error message. */
  stderrTail(lines?: number): string;
  /** SIGTERM (sent `signals` times, for a process whose second signal cuts a drain pause), then SIGKILL after killAfterMs. */
  stop(opts?: { signals?: number; killAfterMs?: number }): Promise<void>;
}

/** Start `routerctl <args>` as its own process, stdout and stderr captured, never inherited. */
export function spawnRouterctl(label: string, args: string[]): RouterctlChild {
  installExitHook();
  const child = spawn(process.execPath, [routerctlBin(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  live.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    // Only the first lines matter (URLs); keep memory flat for a chatty process.
    if (out.length < 64 * 1024) out += c;
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err = (err + c).slice(-16 * 1024);
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      live.delete(child);
      resolve();
    });
    child.once('error', () => {
      live.delete(child);
      resolve();
    });
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;

  return {
    child,
    label,
    firstLine<T>(accept: (line: string) => T | undefined, timeoutMs: number): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = (): boolean => {
          for (const line of out.split('\n').slice(0, -1)) {
            const v = accept(line.trim());
            if (v !== undefined) {
              done();
              resolve(v);
              return true;
            }
          }
          return false;
        };
        const onData = (): void => void check();
        const onExit = (): void => {
          done();
          reject(new Error(`${label} exited before it was ready${tail(err) ? `: ${tail(err)}` : ''}`));
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${label} did not start within ${Math.round(timeoutMs / 1000)} s${tail(err) ? `: ${tail(err)}` : ''}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          child.off('exit', onExit);
        };
        if (check()) return;
        if (!running()) return onExit();
        child.stdout!.on('data', onData);
        child.once('exit', onExit);
      });
    },
    stderrTail: (lines = 3) => tail(err, lines),
    async stop({ signals = 1, killAfterMs = 5000 } = {}) {
      if (!running()) return;
      const kill = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      child.kill('SIGTERM');
      for (let i = 1; i < signals; i++) {
        // Signals of one kind that arrive together merge into one; space them out.
        await Promise.race([exited, new Promise((r) => setTimeout(r, 150))]);
        if (running()) child.kill('SIGTERM');
      }
      await exited;
      clearTimeout(kill);
    },
  };
}

/** The last non-empty lines of a log, joined for a one-line error. */
function tail(text: string, lines = 3): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-lines)
    .join(' | ');
}
