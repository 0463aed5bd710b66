import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ExpositionWriter, PROMETHEUS_CONTENT_TYPE } from '../../src/prometheus/index.js';
import { histogramSeries, parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

const POW2 = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];
const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
const rank = (dp: string) => ({ model_name: MODEL, engine_type: 'unified', tp_rank: '0', pp_rank: '0', dp_rank: dp });

/** The fixed set behind writer-golden.txt; also the input of the round-trip test. */
function goldenWriter(): ExpositionWriter {
  // Counts arrive as typed arrays in production, so the golden input uses them too.
  const tiny = new Float64Array(POW2.length + 1);
  tiny[6] = 1; // one observation of 40 blocks lands in le="64"
  const big = new Uint32Array(POW2.length + 1);
  big[0] = 2;
  big[2] = 3;
  big[13] = 1;
  big[14] = 1;
  return new ExpositionWriter()
    .counter('routerctl_requests_total', 'Requests received at the edge, by route and method.', [
      { labels: { route: '/generate', method: 'POST' }, value: 12 },
      { labels: { route: '/v1/chat/completions', method: 'POST' }, value: 3 },
    ])
    .counter('routerctl_gate_rejections_total', 'Candidates removed by the queue gate.', [])
    .gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', [
      { labels: rank('0'), value: 0 },
      { labels: rank('1'), value: 7 },
    ])
    .gauge('routerctl_odd_values', 'Help with a backslash \\ and a\nsecond line; "quotes" stay as they are.', [
      { labels: { case: 'nan' }, value: NaN },
      { labels: { case: 'inf' }, value: Infinity },
      { labels: { case: '-inf' }, value: -Infinity },
      { labels: { case: 'fraction' }, value: 0.125 },
      { labels: { case: 'negative' }, value: -3 },
      { labels: { case: 'huge' }, value: 1e21 },
      { labels: { case: 'tiny' }, value: 1e-7 },
      { labels: { case: 'escaped', path: 'C:\\tmp\\"x"\nnext' }, value: 1 },
      { value: 42 },
    ])
    .histogram('sgl_router_diverted_overlap_blocks', 'Deepest matched-prefix blocks among gate-rejected owners.', [
      { labels: { model_id: 'tiny' }, bounds: POW2, counts: tiny, sum: 40 },
      { labels: { model_id: 'big' }, bounds: POW2, counts: big, sum: 20011 },
    ])
    .histogram('routerctl_queue_wait_seconds', 'Time a request waited in the router before dispatch.', [
      { bounds: [0.005, 0.01, 0.025, 0.1, 1, 2.5], counts: [1, 0, 2, 0, 3, 0, 4], sum: 17.25 },
    ])
    .histogram('routerctl_ttft_seconds', 'Time to first token.', []);
}

describe('ExpositionWriter', () => {
  it('matches writer-golden.txt byte for byte', () => {
    expect(goldenWriter().toString()).toBe(fixture('writer-golden.txt'));
  });

  it('exports the 0.0.4 content type', () => {
    expect(PROMETHEUS_CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('writes nothing for an empty writer, and ends every non-empty output with a newline', () => {
    expect(new ExpositionWriter().toString()).toBe('');
    expect(new ExpositionWriter().gauge('g', 'h', []).toString()).toBe('# HELP g h\n# TYPE g gauge\n');
  });

  it.each([
    [0, '0'],
    [-0, '0'],
    [64, '64'],
    [1e6, '1000000'],
    [2 ** 53, '9007199254740992'],
    [1e21, '1000000000000000000000'],
    [-1e22, '-10000000000000000000000'],
    [0.005, '0.005'],
    [2.5, '2.5'],
    [1 / 3, '0.3333333333333333'],
    [1e-7, '1e-7'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
    [NaN, 'NaN'],
  ])('formats %s as %s', (value, text) => {
    expect(new ExpositionWriter().gauge('g', 'h', [{ value }]).toString()).toBe(`# HELP g h\n# TYPE g gauge\ng ${text}\n`);
  });

  it.each([
    ['plain', 'plain'],
    ['back\\slash', 'back\\\\slash'],
    ['say "hi"', 'say \\"hi\\"'],
    ['two\nlines', 'two\\nlines'],
    ['tab\tand\rcr stay raw', 'tab\tand\rcr stay raw'],
    ['', ''],
  ])('escapes label value %j', (value, escaped) => {
    const out = new ExpositionWriter().counter('c_total', 'h', [{ labels: { v: value }, value: 1 }]).toString();
    expect(out.split('\n')[2]).toBe(`c_total{v="${escaped}"} 1`);
  });

  it('formats le like the Go and Rust clients, ending at +Inf equal to _count', () => {
    const out = new ExpositionWriter().histogram('h', 'x', [{ bounds: [0.005, 1, 2, 64], counts: [0, 1, 0, 2, 5], sum: 1000 }]).toString();
    expect(out).toBe(
      [
        '# HELP h x',
        '# TYPE h histogram',
        'h_bucket{le="0.005"} 0',
        'h_bucket{le="1"} 1',
        'h_bucket{le="2"} 1',
        'h_bucket{le="64"} 3',
        'h_bucket{le="+Inf"} 8',
        'h_sum 1000',
        'h_count 8',
        '',
      ].join('\n'),
    );
  });

  it('keeps +Inf equal to _count when counts has no overflow slot', () => {
    const out = new ExpositionWriter().histogram('h', 'x', [{ bounds: [1, 2], counts: [1, 2], sum: 3 }]).toString();
    expect(out).toContain('h_bucket{le="+Inf"} 3\nh_sum 3\nh_count 3\n');
  });

  it('refuses a family written twice (invalid exposition)', () => {
    const w = new ExpositionWriter().gauge('g', 'h', []);
    expect(() => w.counter('g', 'h', [])).toThrow(/written twice/);
  });
});

describe('writer -> parser round trip', () => {
  const families = parsePrometheusText(goldenWriter().toString(), {
    onError: (line, text, reason) => expect.fail(`line ${line} skipped (${reason}): ${text}`),
  });

  it('recovers every family with its type and help', () => {
    expect([...families.values()].map((f) => [f.name, f.type, f.samples.length])).toEqual([
      ['routerctl_requests_total', 'counter', 2],
      ['routerctl_gate_rejections_total', 'counter', 0],
      ['sglang:num_queue_reqs', 'gauge', 2],
      ['routerctl_odd_values', 'gauge', 9],
      ['sgl_router_diverted_overlap_blocks', 'histogram', 34],
      ['routerctl_queue_wait_seconds', 'histogram', 9],
      ['routerctl_ttft_seconds', 'histogram', 0],
    ]);
    expect(families.get('routerctl_odd_values')?.help).toBe('Help with a backslash \\ and a\nsecond line; "quotes" stay as they are.');
  });

  it('recovers values, labels and escapes exactly', () => {
    const odd = families.get('routerctl_odd_values')!.samples;
    expect(odd.map((s) => s.value)).toEqual([NaN, Infinity, -Infinity, 0.125, -3, 1e21, 1e-7, 1, 42]);
    expect(odd[7]!.labels).toEqual({ case: 'escaped', path: 'C:\\tmp\\"x"\nnext' });
    expect(odd[8]!.labels).toEqual({});
    expect(sumSamples(families.get('sglang:num_queue_reqs'))).toBe(7);
    expect(sumSamples(families.get('routerctl_gate_rejections_total'))).toBeUndefined();
  });

  it('recovers histograms as cumulative buckets per label set', () => {
    const [tiny, big] = histogramSeries(families.get('sgl_router_diverted_overlap_blocks')!);
    expect(tiny!.labels).toEqual({ model_id: 'tiny' });
    expect(tiny!.buckets.map((b) => b.le)).toEqual([...POW2, Infinity]);
    expect(tiny!.buckets.find((b) => b.le === 32)!.count).toBe(0);
    expect(tiny!.buckets.find((b) => b.le === 64)!.count).toBe(1);
    expect([tiny!.sum, tiny!.count]).toEqual([40, 1]);
    expect(big!.buckets.map((b) => b.count)).toEqual([2, 2, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 7]);
    expect([big!.sum, big!.count]).toEqual([20011, 7]);
    expect(histogramSeries(families.get('routerctl_ttft_seconds')!)).toEqual([]);
  });
});
