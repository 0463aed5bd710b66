import { Box } from 'ink';
import type { ReactElement } from 'react';
import type { Banner } from '../banners.js';
import { Line } from './Line.js';

/** The alert banners (fleet saturated, gate inert), one line each, at most `lines`. */
export function AlertBanner({ banners, lines }: { banners: Banner[]; lines: number }): ReactElement | null {
  if (lines <= 0 || banners.length === 0) return null;
  return (
    <Box flexDirection="column">
      {banners.slice(0, lines).map((b, i) => (
        <Line key={i} segments={[{ text: b.text, color: b.tone, inverse: b.loud, bold: b.loud }]} />
      ))}
    </Box>
  );
}
