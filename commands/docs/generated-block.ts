/**
 * The markers a generated block sits between. Everything outside them is written by
 * hand; everything inside is `npm run docs`'s, and is rewritten on every run.
 */
export type BlockStyle = 'roff' | 'markdown';

function markers(style: BlockStyle, name: string): { begin: string; end: string } {
  return style === 'roff'
    ? { begin: `.\\" BEGIN GENERATED ${name} (npm run docs; do not edit by hand)`, end: `.\\" END GENERATED ${name}` }
    : { begin: `<!-- BEGIN GENERATED: ${name} (npm run docs; do not edit by hand) -->`, end: `<!-- END GENERATED: ${name} -->` };
}

/** `text` with the block `name` replaced by `body`; a file without the block's markers is an error, not a silent skip. */
export function replaceBlock(text: string, file: string, style: BlockStyle, name: string, body: string): string {
  const { begin, end } = markers(style, name);
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file}: no generated block ${name} (expected the line ${begin} and, after it, ${end})`);
  // Markdown wants blank lines around a table or heading; roff reads line by line.
  const inner = style === 'markdown' ? `\n${body.trim()}\n\n` : `${body.trimEnd()}\n`;
  return `${text.slice(0, from + begin.length)}\n${inner}${text.slice(to)}`;
}
