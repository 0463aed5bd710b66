/**
 * Plain text to roff for the man pages: hyphens as `\-` (so they are not broken or
 * turned into dashes), backslashes as `\e`, characters beyond ASCII by their groff
 * name, a line that would open with a control character protected, and `code` spans
 * set in bold.
 */
export function roffText(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? `\\fB${escape(part.slice(1, -1))}\\fR` : escape(part)))
    .join('')
    .replace(/^([.'])/, '\\&$1');
}

function escape(text: string): string {
  // Beyond ASCII, groff's own name for the character (\[u2248] for ≈): man pages are read as Latin-1 or ASCII.
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/[^\x00-\x7f]/gu, (c) => `\\[u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

/** A flag in bold, as the pages write it: `\fB\-\-worker\-queue\-limit\fR`. */
export function roffFlag(name: string): string {
  return `\\fB${escape(name.length === 1 ? `-${name}` : `--${name}`)}\\fR`;
}

/** A sentence: capital first letter, one full stop at the end. */
export function sentence(text: string): string {
  const t = text.trim();
  return t === '' ? '' : fullStop(t[0]!.toUpperCase() + t.slice(1));
}

/** The text with one full stop at its end, its case kept (a default such as `cache_aware`). */
export function fullStop(text: string): string {
  const t = text.trim();
  return t === '' || /[.!?]$/.test(t) ? t : `${t}.`;
}

/** Text without its `code` marks, for the rc file's comments. */
export function plainText(text: string): string {
  return text.replace(/`([^`]*)`/g, '$1');
}
