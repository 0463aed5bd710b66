/**
 * Where a setting's value came from. Operators debugging "why is the gate at 6?"
 * need the answer in one word, so every resolved value keeps its origin and every
 * problem quotes it.
 */
export type Origin =
  | { source: 'default'; label: 'default' }
  | { source: 'flag'; label: 'flag' }
  | { source: 'env'; label: string; env: string }
  | { source: 'rc'; label: string; file: string; key: string };

export const DEFAULT_ORIGIN: Origin = { source: 'default', label: 'default' };
export const FLAG_ORIGIN: Origin = { source: 'flag', label: 'flag' };

export function envOrigin(name: string): Origin {
  return { source: 'env', label: `env ${name}`, env: name };
}

/** `file` is the display path (relative to the cwd when that is shorter). */
export function rcOrigin(file: string, key: string): Origin {
  return { source: 'rc', label: `${file}:${key}`, file, key };
}

export function isExplicit(origin: Origin | undefined): boolean {
  return origin !== undefined && origin.source !== 'default';
}
