import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { signalExitStatus } from '../cli/index.js';
import type { StopSignal } from '../cli/index.js';
import type { RouterConfig } from '../config/index.js';
import { ErrorCodes, RouterctlError } from '../errors/index.js';
import type { ChildState } from '../tui/index.js';
import type { FromRouterChild, ToRouterChild } from './router-child.js';

const CHILD = fileURLToPath(new URL('./router-child.js', import.meta.url));
const LOG_LINES = 300;
const LOG_FLUSH_MS = 250;
/**
 * The child enforces the drain ceiling itself; these bound it from outside, so the
 * whole tree obeys the ceiling even if the child hangs: after a first stop, SIGKILL
 * at --shutdown-drain-secs plus this; after a second, SIGKILL after CUT_KILL_MS.
 */
const DRAIN_KILL_GRACE_MS = 5000;
const CUT_KILL_MS = 3000;

/**
 * The router as a child process of the console (`routerctl serve` on a terminal):
 * started with the resolved configuration, its stderr kept as log lines, its life
 * exposed as a store the console draws. `stop()` asks it to drain; a second call
 * asks it to stop now; if it has not exited in time it is killed.
 */
export class RouterProcess {
  private state: ChildState;
  private readonly listeners = new Set<() => void>();
  private stops = 0;
  private firstStop: StopSignal | undefined;
  private killedByUs = false;
  private drainMs = 0;
  private partial = '';
  private pending: string[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(private readonly child: ChildProcess) {
    this.state = { pid: child.pid ?? null, url: null, phase: 'starting', exit: null, crashed: false, log: [] };
    const onData = (chunk: Buffer): void => this.appendLog(chunk.toString('utf8'));
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (this.partial) this.appendLog('\n');
        this.flushLog();
        // After a stop, 0 (clean drain) and 128 + N (requests cut) are how a router ends; anything else is a failure.
        const failed = code !== null && code !== 0 && code <= 128;
        this.update({ phase: 'exited', exit: { code, signal }, crashed: this.stops === 0 || failed });
        resolve({ code, signal });
      });
    });
  }

  /** Fork the router and resolve once it listens; a start failure rejects with its one-line error. */
  static async start(config: RouterConfig): Promise<RouterProcess> {
    const child = fork(CHILD, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: process.env });
    const rp = new RouterProcess(child);
    rp.drainMs = config.shutdownDrainSecs * 1000;
    const url = await new Promise<string>((resolve, reject) => {
      const onMessage = (m: FromRouterChild): void => {
        if (m.type === 'listening') resolve(m.url);
        else reject(new RouterctlError(m.code, m.message, { exitCode: m.exitCode }));
      };
      child.on('message', onMessage);
      void rp.exited.then(({ code, signal }) => {
        const last = rp.state.log.filter((l) => l.trim() !== '').at(-1);
        reject(
          new RouterctlError(
            ErrorCodes.INTERNAL,
            `the router process exited (${signal ? `signal ${signal}` : `status ${code}`}) before it listened${last ? `: ${last}` : ''}`,
          ),
        );
      });
      child.send({ type: 'start', config } satisfies ToRouterChild);
    });
    rp.update({ phase: 'running', url });
    return rp;
  }

  get url(): string {
    return this.state.url ?? '';
  }

  get = (): ChildState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /**
   * First call: drain (`signal` is the one the console got, SIGINT for its q key).
   * Second: cut now. Either way, killed if it outlives its bound.
   */
  stop(signal: StopSignal): void {
    if (this.state.phase === 'exited') return;
    this.stops++;
    if (this.stops === 1) {
      this.firstStop = signal;
      this.update({ phase: 'stopping' });
    }
    if (this.child.connected) this.child.send({ type: 'stop', signal } satisfies ToRouterChild);
    else this.child.kill(signal);
    const t = setTimeout(
      () => {
        this.killedByUs = true;
        this.child.kill('SIGKILL');
      },
      this.stops === 1 ? this.drainMs + DRAIN_KILL_GRACE_MS : CUT_KILL_MS,
    );
    void this.exited.then(() => clearTimeout(t));
  }

  /**
   * The exit status `serve` reports for the router once it exited: 0 after a clean
   * drain, its 128 + N after a stop that cut requests (or 128 + N of the first stop's
   * signal when it had to be killed), 1 when it failed or exited unasked.
   */
  exitStatus(): number {
    const exit = this.state.exit;
    if (!exit || this.state.crashed) return 1;
    if (exit.code !== null) return exit.code;
    return this.killedByUs && this.firstStop ? signalExitStatus(this.firstStop) : 1;
  }

  /** Kill at once (the console is going away and cannot wait). */
  kill(): void {
    if (this.state.phase === 'exited') return;
    this.killedByUs = true;
    this.child.kill('SIGKILL');
  }

  private appendLog(text: string): void {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    if (parts.length === 0) return;
    // Text logs carry an ISO timestamp the console does not need; JSON lines stay whole.
    for (const l of parts) this.pending.push(l.replace(/^\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d)\.\d+Z /, '$1 '));
    // A chatty router must not cost a frame per line: publish at most every LOG_FLUSH_MS.
    this.flushTimer ??= setTimeout(() => this.flushLog(), LOG_FLUSH_MS);
  }

  private flushLog(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.length === 0) return;
    const log = [...this.state.log, ...this.pending].slice(-LOG_LINES);
    this.pending = [];
    this.update({ log });
  }

  private update(patch: Partial<ChildState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of this.listeners) l();
  }
}
