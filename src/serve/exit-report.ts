import type { ChildState } from '../tui/index.js';

/** Log lines of a crashed router repeated on the restored terminal. */
const LAST_LINES = 12;

/**
 * What `serve` says on the terminal once its console is gone: nothing after a stop it
 * asked for, but for a router that died on its own, its exit and its last log lines,
 * so they are not lost with the console's screen.
 */
export function exitReport(child: ChildState): string {
  if (!child.crashed || child.exit === null) return '';
  const how = child.exit.signal !== null ? `signal ${child.exit.signal}` : `status ${child.exit.code ?? '?'}`;
  const last = child.log.filter((l) => l.trim() !== '').slice(-LAST_LINES);
  const head = `routerctl serve: the router process${child.pid !== null ? ` (pid ${child.pid})` : ''} exited on its own with ${how}`;
  return last.length === 0 ? `${head}; it logged nothing\n` : `${head}; its last log lines:\n${last.map((l) => `  ${l}`).join('\n')}\n`;
}
