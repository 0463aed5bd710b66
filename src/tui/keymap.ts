import type { SortKey } from '../fleet/index.js';
import { nextSortKey } from '../fleet/index.js';

export type Mode = 'normal' | 'filter' | 'help';

export interface ConsoleUiState {
  mode: Mode;
  paused: boolean;
  sort: SortKey;
  /** The sort turned around (key S). */
  reverse: boolean;
  /** The applied filter. */
  filter: string;
  /** What is being typed after `/`; applied live while typing. */
  draft: string;
}

/** The subset of Ink's Key the console reacts to. */
export interface KeyInfo {
  ctrl?: boolean;
  meta?: boolean;
  escape?: boolean;
  return?: boolean;
  backspace?: boolean;
  delete?: boolean;
  tab?: boolean;
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
}

export function initialUiState(sort: SortKey = 'waiting', filter = '', reverse = false): ConsoleUiState {
  return { mode: 'normal', paused: false, sort, reverse, filter, draft: filter };
}

/** The filter the table uses right now: the draft while typing, else the applied one. */
export function activeFilter(s: ConsoleUiState): string {
  return s.mode === 'filter' ? s.draft : s.filter;
}

/**
 * One key press. `q` and Ctrl-C quit (Ctrl-C even while typing a filter, where `q`
 * is just a letter); `p` or space pauses the view (data keeps arriving); `s` cycles
 * the sort through every column and `S` turns it around; `/` edits the filter (Enter keeps it, Esc drops it); `?` toggles help,
 * and any key closes it; Esc in the table clears the filter.
 */
export function reduceKey(s: ConsoleUiState, input: string, key: KeyInfo): { state: ConsoleUiState; quit: boolean } {
  const keep = { state: s, quit: false };
  if (key.ctrl && input === 'c') return { state: s, quit: true };
  switch (s.mode) {
    case 'help':
      if (input === 'q' && !key.ctrl) return { state: s, quit: true };
      return { state: { ...s, mode: 'normal' }, quit: false };
    case 'filter':
      if (key.return) return { state: { ...s, mode: 'normal', filter: s.draft.trim(), draft: s.draft.trim() }, quit: false };
      if (key.escape) return { state: { ...s, mode: 'normal', filter: '', draft: '' }, quit: false };
      if (key.backspace || key.delete) return { state: { ...s, draft: s.draft.slice(0, -1) }, quit: false };
      if (key.ctrl && input === 'u') return { state: { ...s, draft: '' }, quit: false };
      if (key.ctrl || key.meta || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return keep;
      // Printable text only (a paste arrives as one string).
      if (input.length > 0 && !/[\u0000-\u001f\u007f]/.test(input)) return { state: { ...s, draft: s.draft + input }, quit: false };
      return keep;
    case 'normal':
      if (key.escape) return s.filter ? { state: { ...s, filter: '', draft: '' }, quit: false } : keep;
      if (key.ctrl || key.meta) return keep;
      switch (input) {
        case 'q':
          return { state: s, quit: true };
        case 'p':
        case ' ':
          return { state: { ...s, paused: !s.paused }, quit: false };
        case 's':
          return { state: { ...s, sort: nextSortKey(s.sort) }, quit: false };
        case 'S':
          return { state: { ...s, reverse: !s.reverse }, quit: false };
        case '/':
          return { state: { ...s, mode: 'filter', draft: s.filter }, quit: false };
        case '?':
          return { state: { ...s, mode: 'help' }, quit: false };
        default:
          return keep;
      }
  }
}
