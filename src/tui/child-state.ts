/** What the console shows about a router it supervises (`routerctl serve` on a terminal). */
export interface ChildState {
  pid: number | null;
  url: string | null;
  phase: 'starting' | 'running' | 'stopping' | 'exited';
  exit: { code: number | null; signal: string | null } | null;
  /** The router exited without being asked to. */
  crashed: boolean;
  /** The router's log lines (its stderr), newest last. */
  log: string[];
}
