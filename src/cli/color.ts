/**
 * Colour policy for everything routerctl prints (clig.dev): off when NO_COLOR is set
 * and non-empty, when TERM=dumb, when --no-color was given, or when the stream is not
 * a terminal. Ink's chalk ignores NO_COLOR, so the bin maps it to FORCE_COLOR=0
 * before anything imports chalk; this module is the single place that decides.
 */
export function colorEnabled(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR === '0') return false;
  if (env.TERM === 'dumb') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return true;
  return stream.isTTY === true;
}

const codes = { red: [31, 39], yellow: [33, 39], green: [32, 39], dim: [2, 22], bold: [1, 22] } as const;
export type Style = keyof typeof codes;

export function paint(text: string, style: Style, enabled: boolean): string {
  if (!enabled) return text;
  const [open, close] = codes[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}
