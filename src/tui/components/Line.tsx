import { Text } from 'ink';
import type { ReactElement } from 'react';
import { useColor } from '../color-context.js';

export type Tone = 'red' | 'yellow' | 'green' | 'cyan' | 'magenta' | 'blue' | 'gray';

export interface Segment {
  text: string;
  color?: Tone | undefined;
  bold?: boolean;
  inverse?: boolean;
  dim?: boolean;
}

export type SegmentInput = Segment | string | false | null | undefined;

/**
 * Exactly one terminal row: segments side by side, cut at the right edge instead of
 * wrapping, because the console budgets its height line by line (Ink clears the
 * whole screen on every frame once a frame reaches the terminal's height).
 * Without colour every style is dropped, not just the colours.
 */
export function Line({ segments }: { segments: SegmentInput[] }): ReactElement {
  const color = useColor();
  const parts = segments.filter((s): s is Segment | string => typeof s === 'string' || (typeof s === 'object' && s !== null));
  return (
    <Text wrap="truncate-end">
      {parts.map((s, i) => {
        if (typeof s === 'string') return s;
        if (!color || (!s.color && !s.bold && !s.inverse && !s.dim)) return s.text;
        return (
          <Text
            key={i}
            {...(s.color ? { color: s.color } : {})}
            bold={s.bold ?? false}
            inverse={s.inverse ?? false}
            dimColor={s.dim ?? false}
          >
            {s.text}
          </Text>
        );
      })}
      {parts.length === 0 ? ' ' : ''}
    </Text>
  );
}
