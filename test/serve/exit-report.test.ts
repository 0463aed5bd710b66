import { describe, expect, it } from 'vitest';
import { exitReport } from '../../src/serve/index.js';
import type { ChildState } from '../../src/tui/index.js';

const state = (o: Partial<ChildState>): ChildState => ({
  pid: 4242,
  url: 'http://127.0.0.1:30000',
  phase: 'exited',
  exit: { code: 1, signal: null },
  crashed: true,
  log: [],
  ...o,
});

describe('what serve prints once its console is gone', () => {
  it.each<[string, Partial<ChildState>, string]>([
    ['a stop it asked for: nothing', { crashed: false, exit: { code: 0, signal: null } }, ''],
    ['still running (the console threw): nothing', { crashed: false, exit: null, phase: 'running' }, ''],
    [
      'a crash with its last lines',
      { log: ['router listening', '', 'FATAL: heap out of memory'] },
      'routerctl serve: the router process (pid 4242) exited on its own with status 1; its last log lines:\n  router listening\n  FATAL: heap out of memory\n',
    ],
    [
      'killed by a signal, silent',
      { exit: { code: null, signal: 'SIGKILL' }, log: [] },
      'routerctl serve: the router process (pid 4242) exited on its own with signal SIGKILL; it logged nothing\n',
    ],
  ])('%s', (_name, o, want) => {
    expect(exitReport(state(o))).toBe(want);
  });

  it('keeps only the last 12 lines', () => {
    const out = exitReport(state({ log: Array.from({ length: 30 }, (_, i) => `line ${i}`) }));
    expect(out.split('\n').filter((l) => l.startsWith('  '))).toEqual(Array.from({ length: 12 }, (_, i) => `  line ${18 + i}`));
  });
});
