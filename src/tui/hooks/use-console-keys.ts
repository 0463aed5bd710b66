import { useRef, useState } from 'react';
import { useInput, useStdin } from 'ink';
import type { SortKey } from '../../fleet/index.js';
import { initialUiState, reduceKey } from '../keymap.js';
import type { ConsoleUiState } from '../keymap.js';

/**
 * The console's keys (see keymap.ts), wired to Ink's input. Input is only read when
 * stdin can go raw: Ink throws "Raw mode is not supported" otherwise, and
 * `isRawModeSupported` is undefined rather than false on a pipe, hence Boolean().
 * `onQuit` may be called more than once (a second Ctrl-C while stopping means "now").
 * `order` gives the workers as the table draws them, for the selection keys.
 */
export function useConsoleKeys(opts: {
  onQuit: () => void;
  sort?: SortKey;
  filter?: string;
  reverse?: boolean;
  order?: () => readonly string[];
}): ConsoleUiState {
  const { isRawModeSupported } = useStdin();
  const [state, setState] = useState<ConsoleUiState>(() => initialUiState(opts.sort, opts.filter, opts.reverse));
  // Several keys can arrive in one chunk (a paste, a fast typist): reduce on the latest state.
  const latest = useRef(state);
  latest.current = state;
  const onQuit = useRef(opts.onQuit);
  onQuit.current = opts.onQuit;
  const order = useRef(opts.order);
  order.current = opts.order;
  useInput(
    (input, key) => {
      const { state: next, quit } = reduceKey(latest.current, input, key, order.current?.() ?? []);
      latest.current = next;
      setState(next);
      if (quit) onQuit.current();
    },
    { isActive: Boolean(isRawModeSupported) },
  );
  return state;
}
