import { constants } from 'node:os';

/** The signals a long-running routerctl process treats as "please stop". */
export type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

export interface StopRequest {
  signal: StopSignal;
  /** Who asked: 'signal' for a process signal, or a caller's own name ('console', 'keys'). */
  source: string;
}

/**
 * 128 + the signal's number (143 for SIGTERM, 130 for SIGINT, 129 for SIGHUP): the
 * status a shell, systemd and Kubernetes read as "ended by that signal". routerctl
 * exits with it when a stop had to cut work short (docs/http-edge.md, "Exit status").
 */
export function signalExitStatus(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/**
 * Whether a stop keeps the readiness pause: SIGTERM comes from a supervisor whose load
 * balancer must first see /readyz fail; SIGINT (Ctrl-C, q in the console) and SIGHUP
 * (the terminal went away) come from an operator who wants the process gone.
 */
export function keepsReadinessPause(signal: StopSignal): boolean {
  return signal === 'SIGTERM';
}

/**
 * "The first stop request drains, the second cuts", written once for every process
 * that serves or holds children (docs/http-edge.md, "Shutdown and signals").
 *
 * Requests come from process signals (`listen`) or from the caller (`request`, e.g. a
 * console key or a parent's IPC message). They are counted per source, so a signal
 * that reaches a whole process group (systemd's default KillMode, a terminal's Ctrl-C)
 * and the same stop forwarded by a parent count once, not twice: a cut needs a second
 * request from one source. `first` and `second` are promises, so a request that
 * arrives before the caller is ready to act on it is not lost.
 */
export class StopSignals {
  readonly first: Promise<StopRequest>;
  readonly second: Promise<StopRequest>;
  private firstRequest: StopRequest | undefined;
  private cutting = false;
  private readonly counts = new Map<string, number>();
  private readonly installed: Array<[StopSignal, () => void]> = [];
  private resolveFirst!: (r: StopRequest) => void;
  private resolveSecond!: (r: StopRequest) => void;

  constructor() {
    this.first = new Promise((r) => (this.resolveFirst = r));
    this.second = new Promise((r) => (this.resolveSecond = r));
  }

  /** Count these process signals as stop requests (source 'signal'). */
  listen(signals: readonly StopSignal[] = ['SIGTERM', 'SIGINT']): this {
    for (const s of signals) {
      const handler = (): void => this.request(s);
      process.on(s, handler);
      this.installed.push([s, handler]);
    }
    return this;
  }

  /** One stop request; the first drains, a second from the same source cuts, later ones are no-ops. */
  request(signal: StopSignal, source = 'signal'): void {
    const n = (this.counts.get(source) ?? 0) + 1;
    this.counts.set(source, n);
    if (!this.firstRequest) {
      this.firstRequest = { signal, source };
      this.resolveFirst(this.firstRequest);
    } else if (n >= 2 && !this.cutting) {
      this.cutting = true;
      this.resolveSecond({ signal, source });
    }
  }

  /** The request that started the stop, if any. */
  get started(): StopRequest | undefined {
    return this.firstRequest;
  }

  get cut(): boolean {
    return this.cutting;
  }

  /** Exit status of a stop: 0 when nothing was cut, else 128 + the first signal's number. */
  exitStatus(cutSomething: boolean): number {
    return cutSomething && this.firstRequest ? signalExitStatus(this.firstRequest.signal) : 0;
  }

  /** Remove the process signal handlers (a console that restores the terminal first). */
  dispose(): void {
    for (const [s, h] of this.installed.splice(0)) process.off(s, h);
  }
}
