import type { SortKey } from '../fleet/index.js';
import { nextSortKey } from '../fleet/index.js';

export type Mode = 'normal' | 'filter' | 'help' | 'detail';

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
  /** The selected worker's URL (arrows or j/k); null when none is. */
  selected: string | null;
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
  return { mode: 'normal', paused: false, sort, reverse, filter, draft: filter, selected: null };
}

/** The filter the table uses right now: the draft while typing, else the applied one. */
export function activeFilter(s: ConsoleUiState): string {
  return s.mode === 'filter' ? s.draft : s.filter;
}

/**
 * One key press. `q` and Ctrl-C quit (Ctrl-C even while typing a filter, where `q`
 * is just a letter); `p` or space pauses the view (data keeps arriving); `s` cycles
 * the sort through every column and `S` turns it around; `/` edits the filter (Enter keeps it, Esc drops it); `?` toggles help,
 * and any key closes it. ↓/`j` and ↑/`k` select a worker in the table's order
 * (`order`, the URLs as drawn), Enter opens its detail, and there ↓/↑ go to the next
 * and previous worker; Esc leaves the detail, then drops the selection, then the filter.
 */
export function reduceKey(
  s: ConsoleUiState,
  input: string,
  key: KeyInfo,
  order: readonly string[] = [],
): { state: ConsoleUiState; quit: boolean } {
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
    case 'detail':
      if (key.escape || key.return || key.leftArrow || input === 'h') return { state: { ...s, mode: 'normal' }, quit: false };
      if (key.downArrow || input === 'j') return { state: { ...s, selected: step(order, s.selected, 1) }, quit: false };
      if (key.upArrow || input === 'k') return { state: { ...s, selected: step(order, s.selected, -1) }, quit: false };
      if (input === 'q' && !key.ctrl) return { state: s, quit: true };
      if (input === 'p' || input === ' ') return { state: { ...s, paused: !s.paused }, quit: false };
      if (input === '?') return { state: { ...s, mode: 'help' }, quit: false };
      return keep;
    case 'normal':
      if (key.escape) {
        if (s.selected !== null) return { state: { ...s, selected: null }, quit: false };
        return s.filter ? { state: { ...s, filter: '', draft: '' }, quit: false } : keep;
      }
      if (key.downArrow) return { state: { ...s, selected: step(order, s.selected, 1) }, quit: false };
      if (key.upArrow) return { state: { ...s, selected: step(order, s.selected, -1) }, quit: false };
      if (key.return || key.rightArrow) {
        const selected = s.selected !== null && order.includes(s.selected) ? s.selected : (order[0] ?? null);
        return selected === null ? keep : { state: { ...s, mode: 'detail', selected }, quit: false };
      }
      if (key.ctrl || key.meta) return keep;
      switch (input) {
        case 'j':
          return { state: { ...s, selected: step(order, s.selected, 1) }, quit: false };
        case 'k':
          return { state: { ...s, selected: step(order, s.selected, -1) }, quit: false };
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

/** The next (or previous) worker in the drawn order; the first when none is selected or the selected one is gone. Stops at the ends. */
function step(order: readonly string[], selected: string | null, by: 1 | -1): string | null {
  if (order.length === 0) return null;
  const at = selected === null ? -1 : order.indexOf(selected);
  if (at < 0) return by === 1 ? order[0]! : order[order.length - 1]!;
  return order[Math.min(order.length - 1, Math.max(0, at + by))]!;
}
