import { useEffect, useState } from 'react';
import { useStdout } from 'ink';

export interface TerminalSize {
  columns: number;
  rows: number;
}

export const FALLBACK_SIZE: TerminalSize = { columns: 80, rows: 24 };

/**
 * The terminal's size, following resizes. Ink 6 has no size hook; stdout's
 * `columns`/`rows` are undefined in pipes and under ink-testing-library, where 80×24
 * stands in. `override` (tests, or a caller that knows better) wins outright.
 */
export function useTerminalSize(override?: Partial<TerminalSize>): TerminalSize {
  const { stdout } = useStdout();
  const read = (): TerminalSize => ({
    columns: override?.columns ?? (stdout.columns || FALLBACK_SIZE.columns),
    rows: override?.rows ?? (stdout.rows || FALLBACK_SIZE.rows),
  });
  const [size, setSize] = useState<TerminalSize>(read);
  useEffect(() => {
    const onResize = (): void => setSize(read());
    setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stdout, override?.columns, override?.rows]);
  return size;
}
