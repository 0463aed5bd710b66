import type { ReactElement } from 'react';
import type { ConsoleUiState } from '../keymap.js';
import { fmtAge } from '../../fleet/index.js';
import { Line } from './Line.js';
import type { SegmentInput } from './Line.js';

/** The key hints and the modes in force (PAUSED, the filter, the sort); the filter prompt while typing. */
export function Footer({ ui, quitLabel, pausedForMs }: { ui: ConsoleUiState; quitLabel: string; pausedForMs?: number }): ReactElement {
  if (ui.mode === 'filter') {
    return (
      <Line
        segments={[
          { text: 'filter: ', bold: true },
          ui.draft,
          { text: '█', dim: true },
          { text: '   Enter keeps it · Esc clears it', dim: true },
        ]}
      />
    );
  }
  const key = (k: string, what: string): SegmentInput[] => [{ text: k, bold: true }, ` ${what}  `];
  if (ui.mode === 'detail') {
    return (
      <Line
        segments={[
          ...key('Esc', 'back'),
          ...key('↑↓', 'other worker'),
          ...key('q', quitLabel),
          ...key('p', ui.paused ? 'resume' : 'pause'),
          ...key('?', 'help'),
        ]}
      />
    );
  }
  return (
    <Line
      segments={[
        // The frame on screen is as old as the pause: say so.
        ...(ui.paused
          ? [
              {
                text: ` PAUSED ${pausedForMs !== undefined ? `${fmtAge(pausedForMs)} ` : ''}`,
                color: 'yellow' as const,
                inverse: true,
                bold: true,
              },
              ' ',
            ]
          : []),
        ...key('q', quitLabel),
        ...key('p', ui.paused ? 'resume' : 'pause'),
        ...key('s', `sort:${ui.sort}${ui.reverse ? '↑' : ''}`),
        ...key('/', ui.filter ? `filter:"${ui.filter}"` : 'filter'),
        ...key('↓↵', 'detail'),
        ...key('?', 'help'),
      ]}
    />
  );
}
