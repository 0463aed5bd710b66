/**
 * The families keep each series' rendered labels and the exposition order between
 * scrapes (a scrape over 4,096 workers rebuilt both every time): a series added or
 * dropped after a scrape must show in the next one, in label order.
 */
import { describe, expect, it } from 'vitest';
import { ExpositionWriter, parsePrometheusText } from '../../src/prometheus/index.js';
import { CounterFamily, HistogramFamily } from '../../src/router/metrics/families.js';

const render = (f: CounterFamily): string => new ExpositionWriter().counter(f.name, f.help, f.samples()).toString();
const series = (text: string): string[] => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe('a counter family between scrapes', () => {
  it('shows a series added after a scrape, in label order, and drops a forgotten one', () => {
    const f = new CounterFamily('c_total', 'c', ['worker', 'outcome']);
    f.inc(['http://b', 'ok']);
    expect(series(render(f))).toEqual(['c_total{worker="http://b",outcome="ok"} 1']);
    f.inc(['http://a', 'ok'], 2);
    f.inc(['http://b', 'ok']);
    expect(series(render(f))).toEqual(['c_total{worker="http://a",outcome="ok"} 2', 'c_total{worker="http://b",outcome="ok"} 2']);
    f.forget('worker', 'http://a');
    expect(series(render(f))).toEqual(['c_total{worker="http://b",outcome="ok"} 2']);
  });

  it('escapes label values once, as the writer would', () => {
    const f = new CounterFamily('c_total', 'c', ['reason']);
    f.inc(['say "hi"\\\n']);
    const parsed = parsePrometheusText(render(f));
    expect(parsed.get('c_total')?.samples[0]?.labels).toEqual({ reason: 'say "hi"\\\n' });
  });
});

describe('a histogram family between scrapes', () => {
  it('shows a series added after a scrape, in label order', () => {
    const h = new HistogramFamily('h', 'h', ['model_id'], [1, 2]);
    h.observe(['m2'], 1.5);
    const first = new ExpositionWriter().histogram('h', 'h', h.samples()).toString();
    h.observe(['m1'], 0.5);
    const second = new ExpositionWriter().histogram('h', 'h', h.samples()).toString();
    expect(series(first)).toHaveLength(5);
    expect(series(second).map((l) => l.split('{')[1]!.split('"')[1])).toEqual(['m1', 'm1', 'm1', 'm1', 'm1', 'm2', 'm2', 'm2', 'm2', 'm2']);
    expect(series(second)).toContain('h_bucket{model_id="m2",le="2"} 1');
  });
});

describe('ExpositionWriter.gaugeEach', () => {
  it('writes one series per item with a value, none for null', () => {
    const text = new ExpositionWriter()
      .gaugeEach(
        'g',
        'g',
        [1, 2, 3],
        (n) => `n="${n}"`,
        (n) => (n === 2 ? null : n * 10),
      )
      .toString();
    expect(series(text)).toEqual(['g{n="1"} 10', 'g{n="3"} 30']);
  });
});

describe('a histogram series read for the admin state', () => {
  it('writes what JSON.stringify of its snapshot writes, and holds what it read while the series moves on', () => {
    const h = new HistogramFamily('h', 'h', ['worker'], [0.005, 0.1, 1.5, 30]);
    for (const v of [0.001, 0.07, 0.3333333333333333, 2, 45, 0.1]) h.observe(['http://a'], v);
    const read = h.reading(['http://a']);
    expect(JSON.parse(read.json())).toEqual(read.snapshot());
    expect(read.json()).toBe(JSON.stringify(h.snapshot(['http://a'])));
    // Observations after the reading do not reach it, however late it is written.
    h.observe(['http://a'], 0.002);
    expect(h.snapshot(['http://a']).count).toBe(7);
    expect(read.snapshot()).toEqual({
      buckets: [
        { le: 0.005, count: 1 },
        { le: 0.1, count: 3 },
        { le: 1.5, count: 4 },
        { le: 30, count: 5 },
      ],
      count: 6,
      sum: 0.001 + 0.07 + 0.3333333333333333 + 2 + 45 + 0.1,
    });
    expect(read.json()).toBe(JSON.stringify(read.snapshot()));
    // A series that took nothing reads as zeros.
    expect(h.reading(['http://none']).json()).toBe(JSON.stringify(h.snapshot(['http://none'])));
  });
});
