/** Longest user-supplied text quoted back in a one-line message. */
export const MAX_QUOTED_CHARS = 80;

/**
 * A value or key as a one-line message quotes it: whole when short, else its start
 * and its length, so a pasted blob cannot turn an error line into megabytes.
 */
export function shorten(text: string): string {
  if (text.length <= MAX_QUOTED_CHARS) return text;
  return `${text.slice(0, MAX_QUOTED_CHARS)}… (${text.length} characters)`;
}
