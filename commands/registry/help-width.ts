/**
 * The width yargs wraps help at: 100 columns, or a narrower terminal's. A pipe has no
 * width, so it gets 100, which is the width help-text.ts is written at.
 */
export const HELP_WIDTH = 100;

export function helpWidth(columns: number | undefined): number {
  return Math.min(HELP_WIDTH, columns ?? HELP_WIDTH);
}
