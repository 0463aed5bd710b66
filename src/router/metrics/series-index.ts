/**
 * A metric family's series, found by their label values without building a key:
 * one map level per label. A request books several series; joining its labels into
 * a string key each time cost a string per booking, and a hash of it (BENCHMARKS.md,
 * section 2). Label values here are the same few strings over and over (worker URLs,
 * the model, outcomes), whose hashes V8 keeps.
 */
export class SeriesIndex<T extends { readonly labels: readonly string[] }> {
  #root = new Map<string, unknown>();
  #all: T[] = [];

  /** Map levels: one per label, and one for a family with no labels (its single series). */
  readonly #levels: number;

  constructor(private readonly depth: number) {
    this.#levels = Math.max(1, depth);
  }

  get(labels: readonly string[]): T | undefined {
    let node: unknown = this.#root;
    for (let i = 0; i < this.#levels; i++) {
      node = (node as Map<string, unknown>).get(labels[i] ?? '');
      if (node === undefined) return undefined;
    }
    return node as T;
  }

  /**
   * Add the series for `labels`, which `get` did not find, made by `make` from its own
   * copy of the labels. Callers look first, so that the hot path (a series that
   * exists) makes no closure for `make`.
   */
  create(labels: readonly string[], make: (labels: string[]) => T): T {
    let node = this.#root;
    for (let i = 0; i < this.#levels - 1; i++) {
      const k = labels[i] ?? '';
      let next = node.get(k) as Map<string, unknown> | undefined;
      if (next === undefined) node.set(k, (next = new Map()));
      node = next;
    }
    const series = make(Array.from({ length: this.depth }, (_, i) => labels[i] ?? ''));
    node.set(labels[this.#levels - 1] ?? '', series);
    this.#all.push(series);
    return series;
  }

  /**
   * Drop every series whose label `at` has `value` (a worker that left the fleet).
   * Rare, so the maps are rebuilt from what is left.
   */
  forget(at: number, value: string): void {
    const keep = this.#all.filter((x) => x.labels[at] !== value);
    if (keep.length === this.#all.length) return;
    this.#root = new Map();
    this.#all = [];
    for (const x of keep) this.create(x.labels, () => x);
  }

  /** Every series, in the order they first appeared. */
  values(): readonly T[] {
    return this.#all;
  }
}
