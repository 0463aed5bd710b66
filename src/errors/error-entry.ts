/**
 * The one shape every catalogue of codes shares: the CLI's runtime codes
 * (catalogue.ts), the configuration problems (src/config/codes.ts) and the HTTP API's
 * codes (the router's API_ERROR_CODES). A code is part of a contract, scripts match
 * it; its meaning is the one line the man pages and docs print beside it, so the
 * catalogue is the only place either is written.
 */
export interface ErrorEntry {
  readonly code: string;
  /** One line, lower case, no trailing period: what happened, for the man page's ERRORS section. */
  readonly meaning: string;
}

/** A code the router answers HTTP clients with, and the status it goes with (docs/http-edge.md). */
export interface ApiErrorEntry extends ErrorEntry {
  readonly status: number;
}

/**
 * A catalogue: entries keyed by a stable name. Checked once when the module loads, so
 * a code listed twice or a meaning left empty fails every test at once instead of
 * reaching a man page.
 */
export function errorCatalogue<const T extends Readonly<Record<string, ErrorEntry>>>(entries: T): T {
  const seen = new Set<string>();
  for (const [name, entry] of Object.entries(entries)) {
    if (seen.has(entry.code)) throw new Error(`error catalogue: ${entry.code} is listed twice (again as ${name})`);
    if (entry.meaning.trim() === '') throw new Error(`error catalogue: ${entry.code} has no meaning`);
    seen.add(entry.code);
  }
  return entries;
}

/** The entries of a catalogue in the order written, which is the order the docs list them in. */
export function catalogueEntries<E extends ErrorEntry>(catalogue: Readonly<Record<string, E>>): E[] {
  return Object.values(catalogue);
}

/** Name → code, for the code's call sites (`ErrorCodes.USAGE`), keeping each code's literal type. */
export function codesByName<T extends Readonly<Record<string, ErrorEntry>>>(catalogue: T): { readonly [K in keyof T]: T[K]['code'] } {
  return Object.fromEntries(Object.entries(catalogue).map(([name, e]) => [name, e.code])) as { readonly [K in keyof T]: T[K]['code'] };
}
