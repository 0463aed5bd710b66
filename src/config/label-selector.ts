/** A label name: an optional DNS-subdomain prefix and `/`, then up to 63 of [A-Za-z0-9-_.], alphanumeric at both ends. */
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;
/** A label value: empty, or as a name (no prefix). */
const VALUE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$/;

export type Selector = readonly (readonly [key: string, value: string])[];

/**
 * `--selector k=v…` (docs/http-edge.md §Kubernetes discovery): equality terms only, as
 * the Rust sgl-router takes them, each entry one or more terms separated by commas;
 * a pod must carry every one. Either the terms, or the first entry that is not one.
 */
export function parseSelector(entries: readonly string[]): { ok: true; selector: Selector } | { ok: false; bad: string } {
  const out: [string, string][] = [];
  for (const entry of entries) {
    for (const term of entry.split(',')) {
      const text = term.trim();
      if (text === '' && entry.includes(',')) continue;
      const eq = text.indexOf('=');
      const key = eq < 0 ? text : text.slice(0, eq);
      const value = eq < 0 ? '' : text.slice(eq + 1);
      if (eq <= 0 || value.includes('=') || !isLabelKey(key) || !VALUE.test(value)) return { ok: false, bad: text };
      out.push([key, value]);
    }
  }
  return { ok: true, selector: out };
}

function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return NAME.test(key);
  return PREFIX.test(key.slice(0, slash)) && NAME.test(key.slice(slash + 1));
}

/** The selector as the API server's `labelSelector` query takes it. */
export function selectorQuery(selector: Selector): string {
  return selector.map(([k, v]) => `${k}=${v}`).join(',');
}
