import { describe, expect, it } from 'vitest';
import { SeriesIndex } from '../../src/router/metrics/series-index.js';

type S = { labels: string[]; n: number };
const make = (labels: string[]): S => ({ labels, n: 0 });

describe('SeriesIndex', () => {
  it.each([
    ['no labels: one series', 0, [[], []], 1],
    ['one label', 1, [['a'], ['b'], ['a']], 2],
    [
      'label tuples that a joined key could confuse stay apart',
      2,
      [
        ['a\u0001b', 'c'],
        ['a', 'b\u0001c'],
        ['a', 'b\u0001c'],
      ],
      2,
    ],
    [
      'prefix tuples stay apart',
      3,
      [
        ['x', 'y', 'z'],
        ['x', 'y', 'w'],
        ['x', 'v', 'z'],
      ],
      3,
    ],
  ])('%s', (_n, depth, tuples, distinct) => {
    const idx = new SeriesIndex<S>(depth);
    for (const t of tuples) (idx.get(t) ?? idx.create(t, make)).n++;
    expect(idx.values()).toHaveLength(distinct);
    for (const t of tuples) expect(idx.get(t)?.labels).toEqual(t);
    expect(idx.values().reduce((a, s) => a + s.n, 0)).toBe(tuples.length);
  });

  it('keeps its own copy of the labels and the order series first appeared in', () => {
    const idx = new SeriesIndex<S>(2);
    const labels = ['w1', 'm'];
    idx.create(labels, make);
    labels[0] = 'changed';
    idx.create(['w0', 'm'], make);
    expect(idx.values().map((s) => s.labels)).toEqual([
      ['w1', 'm'],
      ['w0', 'm'],
    ]);
    expect(idx.get(['changed', 'm'])).toBeUndefined();
  });
});
