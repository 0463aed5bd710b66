import { useRef } from 'react';
import { useInput, useStdin } from 'ink';
import type { ReactElement } from 'react';
import type { SortKey } from '../../fleet/index.js';
import type { FleetView } from '../../fleet/index.js';
import type { AlertLatch } from '../banners.js';
import type { ChildState } from '../child-state.js';
import { ColorContext } from '../color-context.js';
import type { HistorySeries } from '../history.js';
import { useAlertLatch } from '../hooks/use-alert-latch.js';
import { useConsoleKeys } from '../hooks/use-console-keys.js';
import { useHistory } from '../hooks/use-history.js';
import { useNow } from '../hooks/use-now.js';
import { constantStore, useStore } from '../hooks/use-store.js';
import type { Store } from '../hooks/use-store.js';
import { useTerminalSize } from '../hooks/use-terminal-size.js';
import type { TerminalSize } from '../hooks/use-terminal-size.js';
import { Console } from './Console.js';
import { shownWorkers } from '../../fleet/index.js';
import { activeFilter } from '../keymap.js';

export interface ConsoleAppProps {
  feed: Store<FleetView | undefined>;
  /** The supervised router (serve); absent for `top`. */
  child?: Store<ChildState> | undefined;
  /** q or Ctrl-C. May be called again while a stop is under way (meaning: now). */
  onQuit: () => void;
  color: boolean;
  title: string;
  target: string;
  intervalMs: number;
  blockSize: number;
  sort?: SortKey;
  reverse?: boolean;
  filter?: string;
  /** Fixed terminal size (tests; ink-testing-library has no rows). */
  size?: Partial<TerminalSize>;
  /** Fixed clock (tests). */
  now?: number;
  /**
   * Playing a recording back (`top --replay`): `p` pauses the playback rather than
   * freezing the view, and other keys (step, speed) go to `onKey`.
   */
  replay?: boolean;
  onKey?: (input: string) => void;
}

const NO_CHILD = constantStore<ChildState | undefined>(undefined);

/**
 * The live console: the feed, the keys, the terminal size, the history and the
 * alert latch live here in hooks; drawing is Console's. Pausing freezes what is drawn
 * (view, history and alerts together) while the hooks keep recording underneath.
 */
export function ConsoleApp(p: ConsoleAppProps): ReactElement {
  const live = useStore(p.feed);
  const { isRawModeSupported } = useStdin();
  const child = useStore(p.child ?? NO_CHILD);
  // The workers in the order drawn, for the selection keys (the table's sort and filter applied to what is shown).
  const order = useRef<readonly string[]>([]);
  const ui = useConsoleKeys({
    onQuit: p.onQuit,
    order: () => order.current,
    ...(p.sort ? { sort: p.sort } : {}),
    ...(p.filter ? { filter: p.filter } : {}),
    ...(p.reverse ? { reverse: true } : {}),
  });
  const size = useTerminalSize(p.size);
  const now = useNow(1000, p.now, live);
  const history = useHistory(live);
  const latch = useAlertLatch(live, p.now ?? Date.now());
  const frozen = useRef<{ view: FleetView | undefined; history: HistorySeries; latch: AlertLatch; now: number } | null>(null);
  useInput((input) => p.onKey?.(input), { isActive: p.onKey !== undefined && Boolean(isRawModeSupported) });
  // A replay pauses its playback instead: the view follows it, so a step shows.
  if (!ui.paused || p.replay === true || frozen.current === null) frozen.current = { view: live, history, latch, now };
  const shown = frozen.current;
  order.current = shown.view ? shownWorkers(shown.view.workers, activeFilter(ui), ui.sort, ui.reverse).map((w) => w.url) : [];
  return (
    <ColorContext.Provider value={p.color}>
      <Console
        view={shown.view}
        history={shown.history}
        latch={shown.latch}
        now={ui.paused ? shown.now : now}
        pausedForMs={ui.paused ? Math.max(0, now - shown.now) : undefined}
        ui={ui}
        size={size}
        title={p.title}
        target={p.target}
        intervalMs={p.intervalMs}
        blockSize={p.blockSize}
        child={child}
      />
    </ColorContext.Provider>
  );
}
