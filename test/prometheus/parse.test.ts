import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { histogramSeries, parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';
import type { ParsedFamily } from '../../src/prometheus/index.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

interface Skipped {
  line: number;
  text: string;
  reason: string;
}

function parse(text: string) {
  const skipped: Skipped[] = [];
  const families = parsePrometheusText(text, { onError: (line, t, reason) => skipped.push({ line, text: t, reason }) });
  return { families, skipped };
}

function only(text: string): ParsedFamily {
  const { families, skipped } = parse(text);
  expect(skipped).toEqual([]);
  expect(families.size).toBe(1);
  return [...families.values()][0]!;
}

describe('sgl-router fixture (Rust router, docs/metrics-and-admin.md §Metric families)', () => {
  const { families, skipped } = parse(fixture('sgl-router-metrics.txt'));

  it('parses every line', () => {
    expect(skipped).toEqual([]);
    expect([...families.keys()]).toEqual([
      'sgl_router_requests_total',
      'sgl_router_workers',
      'sgl_router_worker_inflight_requests',
      'sgl_router_policy_decisions_total',
      'sgl_router_policy_selection_failures_total',
      'sgl_router_cache_admission_evaluated_total',
      'sgl_router_cache_aware_decisions_total',
      'sgl_router_diverted_overlap_blocks',
      'sgl_router_request_duration_seconds',
    ]);
  });

  it('keeps a declared family with no series', () => {
    const fam = families.get('sgl_router_policy_decisions_total')!;
    expect(fam).toEqual({
      name: 'sgl_router_policy_decisions_total',
      type: 'counter',
      help: 'Policy decisions, by policy and reason',
      samples: [],
    });
    expect(sumSamples(fam)).toBeUndefined();
  });

  it.each([
    ['sgl_router_cache_aware_decisions_total', undefined, 9012 + 655 + 37 + 4 + 1 + 1 + 2],
    ['sgl_router_cache_aware_decisions_total', { model_id: 'tiny' }, 4],
    ['sgl_router_cache_aware_decisions_total', { decision: 'all_queued' }, 5],
    ['sgl_router_cache_aware_decisions_total', { model_id: 'tiny', decision: 'cache_miss' }, undefined],
    ['sgl_router_policy_selection_failures_total', { policy: 'cache_aware' }, 7],
    ['sgl_router_policy_selection_failures_total', { reason: 'proposal_empty' }, 1],
    ['sgl_router_worker_inflight_requests', undefined, 21],
    ['sgl_router_worker_inflight_requests', { worker_url: 'http://10.0.0.3:30000@1' }, 0],
    ['sgl_router_workers', { mode: 'plain' }, 3],
    ['sgl_router_cache_admission_evaluated_total', undefined, 431],
    ['sgl_router_diverted_overlap_blocks', undefined, 39], // histogram: sums _count
    ['sgl_router_no_such_metric', undefined, undefined],
  ] as const)('sumSamples(%s, %j) = %s', (name, match, expected) => {
    const filter = match && ((l: Record<string, string>) => Object.entries(match).every(([k, v]) => l[k] === v));
    expect(sumSamples(families.get(name), filter)).toBe(expected);
  });

  it('groups diverted_overlap_blocks by model_id with power-of-two buckets', () => {
    const series = histogramSeries(families.get('sgl_router_diverted_overlap_blocks')!);
    expect(series.map((s) => s.labels)).toEqual([{ model_id: 'llama-8b' }, { model_id: 'tiny' }]);
    const bounds = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, Infinity];
    for (const s of series) expect(s.buckets.map((b) => b.le)).toEqual(bounds);
    const tiny = series[1]!;
    expect(tiny.buckets.map((b) => b.count)).toEqual([0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    expect([tiny.sum, tiny.count]).toEqual([43, 2]);
    expect([series[0]!.sum, series[0]!.count]).toEqual([10251, 37]);
  });

  it('reads fractional le bounds of request_duration_seconds', () => {
    const [s] = histogramSeries(families.get('sgl_router_request_duration_seconds')!);
    expect(s!.buckets.slice(0, 3).map((b) => b.le)).toEqual([0.005, 0.01, 0.025]);
    expect(s!.buckets.find((b) => b.le === 2.5)!.count).toBe(3);
    expect(s!.sum).toBe(5.7);
  });
});

describe('SGLang engine fixture (Python client 0.0.4 output)', () => {
  const { families, skipped } = parse(fixture('sglang-engine-metrics.txt'));
  const rank = (r: string) => (l: Record<string, string>) => l.dp_rank === r;

  it('parses every line; _created gauges are families of their own', () => {
    expect(skipped).toEqual([]);
    expect(families.get('sglang:prompt_tokens_total')!.type).toBe('counter');
    expect(families.get('sglang:prompt_tokens_created')!.type).toBe('gauge');
    expect(families.get('sglang:time_to_first_token_seconds_created')!.samples[0]!.value).toBe(1.7229e9);
  });

  it.each([
    ['sglang:num_queue_reqs', undefined, 8],
    ['sglang:num_queue_reqs', '0', 3],
    ['sglang:num_queue_reqs', '1', 5],
    ['sglang:num_running_reqs', undefined, 21],
    ['sglang:token_usage', '1', 0.46],
    ['sglang:gen_throughput', '0', 1843.2],
    ['sglang:cache_hit_rate', '1', 0],
    ['sglang:num_queue_reqs', '2', undefined],
    ['sglang:prompt_tokens_total', undefined, 1234567],
  ] as const)('%s dp_rank=%s sums to %s', (name, dp, expected) => {
    expect(sumSamples(families.get(name), dp === undefined ? undefined : rank(dp))).toBe(expected);
  });

  it('keeps all scheduler labels', () => {
    expect(families.get('sglang:num_queue_reqs')!.samples[1]!.labels).toEqual({
      dp_rank: '1',
      engine_type: 'unified',
      model_name: 'meta-llama/Llama-3.1-8B-Instruct',
      moe_ep_rank: '0',
      pp_rank: '0',
      tp_rank: '0',
    });
  });

  it('reads the TTFT histogram with le before the other labels and _count before _sum', () => {
    const fam = families.get('sglang:time_to_first_token_seconds')!;
    const [s, ...rest] = histogramSeries(fam);
    expect(rest).toEqual([]);
    expect(s!.labels).toEqual({ model_name: 'meta-llama/Llama-3.1-8B-Instruct' });
    expect(s!.buckets.map((b) => b.le)).toEqual([0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, Infinity]);
    expect(s!.buckets[1]).toEqual({ le: 0.2, count: 50 });
    expect(s!.count).toBe(86);
    expect(s!.sum).toBeCloseTo(528.45, 9);
  });
});

describe('vLLM engine fixture', () => {
  const { families, skipped } = parse(fixture('vllm-engine-metrics.txt'));
  const engine = (e: string) => (l: Record<string, string>) => l.engine === e;

  it('parses every line', () => {
    expect(skipped).toEqual([]);
    expect(families.get('process_virtual_memory_bytes')!.samples[0]!.value).toBe(12884901888);
  });

  it.each([
    ['vllm:num_requests_waiting', undefined, 4],
    ['vllm:num_requests_waiting', '0', 4],
    ['vllm:num_requests_waiting', '1', 0],
    ['vllm:num_requests_running', undefined, 25],
    ['vllm:prefix_cache_queries_total', '0', 1048576],
    ['vllm:prefix_cache_hits_total', undefined, 917504],
    ['vllm:kv_cache_usage_perc', '0', 0.731],
    ['vllm:gpu_cache_usage_perc', undefined, undefined],
  ] as const)('%s engine=%s sums to %s', (name, e, expected) => {
    expect(sumSamples(families.get(name), e === undefined ? undefined : engine(e))).toBe(expected);
  });

  it('keeps info labels verbatim', () => {
    expect(families.get('vllm:cache_config_info')!.samples[0]!.labels).toMatchObject({
      block_size: '16',
      num_gpu_blocks: '27118',
      engine: '0',
    });
  });

  it('reads the queue-time histogram', () => {
    const [s] = histogramSeries(families.get('vllm:request_queue_time_seconds')!);
    expect(s).toEqual({
      labels: { engine: '0', model_name: 'Qwen/Qwen3-8B' },
      buckets: [
        { le: 0.3, count: 40 },
        { le: 0.5, count: 41 },
        { le: 0.8, count: 42 },
        { le: Infinity, count: 42 },
      ],
      sum: 3.25,
      count: 42,
    });
  });
});

describe('line syntax', () => {
  it.each([
    ['escaped backslash', 'm{a="x\\\\y"} 1', { a: 'x\\y' }],
    ['escaped quote', 'm{a="say \\"hi\\""} 1', { a: 'say "hi"' }],
    ['escaped newline', 'm{a="one\\ntwo"} 1', { a: 'one\ntwo' }],
    ['all escapes at once', 'm{a="\\\\\\"\\n"} 1', { a: '\\"\n' }],
    ['unknown escape kept verbatim', 'm{a="C:\\temp"} 1', { a: 'C:\\temp' }],
    ['comma and brace inside quotes', 'm{a="x,y}",b="{z=1}"} 1', { a: 'x,y}', b: '{z=1}' }],
    ['trailing comma', 'm{a="1",b="2",} 1', { a: '1', b: '2' }],
    ['empty label set', 'm{} 1', {}],
    ['no label set', 'm 1', {}],
    ['empty value', 'm{a=""} 1', { a: '' }],
    ['blanks around labels', 'm{ a = "1" , b="2" } 1', { a: '1', b: '2' }],
    ['tabs as separators', 'm{a="1"}\t1', { a: '1' }],
    ['utf-8 value', 'm{a="ümlaut ✓"} 1', { a: 'ümlaut ✓' }],
  ])('%s', (_, line, labels) => {
    const fam = only(line + '\n');
    expect(fam.samples).toEqual([{ name: 'm', labels, value: 1 }]);
  });

  it.each([
    ['1', 1],
    ['-1', -1],
    ['0.25', 0.25],
    ['1e3', 1000],
    ['1.5E-3', 0.0015],
    ['1.7229e+09', 1.7229e9],
    ['.5', 0.5],
    ['+Inf', Infinity],
    ['-Inf', -Infinity],
    ['Inf', Infinity],
    ['+inf', Infinity],
    ['NaN', NaN],
    ['nan', NaN],
  ])('value %s', (text, value) => {
    expect(only(`m ${text}\n`).samples[0]!.value).toEqual(value);
  });

  it('reads decimals exactly as Number() does', () => {
    // The parser has a hand-rolled fast path for plain decimals; it must agree bit for bit.
    let seed = 12345;
    const rnd = (k: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % k;
    };
    const tokens: string[] = ['0', '-0', '0.0', '007', '1.', '123456789012345', '1234567890123456', '0.1', '0.3', '-2.675'];
    for (let t = 0; t < 3000; t++) {
      const digits = Array.from({ length: 1 + rnd(17) }, () => String(rnd(10))).join('');
      const dot = rnd(digits.length + 2);
      const body = dot <= digits.length ? digits.slice(0, dot) + '.' + digits.slice(dot) : digits;
      tokens.push((rnd(3) === 0 ? '-' : rnd(5) === 0 ? '+' : '') + (body === '.' ? '0' : body));
    }
    const text = tokens.map((t, i) => `m{i="${i}"} ${t}\n`).join('');
    const values = only(text).samples.map((s) => s.value);
    expect(values.map((v, i) => [tokens[i], Object.is(v, Number(tokens[i]))])).toEqual(tokens.map((t) => [t, true]));
  });

  it.each([
    ['m 1 1700000000123', 1700000000123],
    ['m{a="b"} 1 -5', -5],
    ['m 1 1700000000.123', 1700000000123], // OpenMetrics seconds
  ])('timestamp in %s', (line, ms) => {
    expect(only(line + '\n').samples[0]!.timestampMs).toBeCloseTo(ms, 0);
  });

  // The parser reuses the previous line's name, label names and values when the text matches;
  // these sequences are built to defeat a sloppy prefix match.
  it('does not confuse a line with the previous one that it starts like', () => {
    const text = [
      'm{a="x",ab="y"} 1',
      'm{ab="x",a="y"} 2',
      'm2{a="xy"} 3',
      'm{a="x\\"y"} 4',
      'm{a="x"} 5',
      'm:sub{a="x\\\\"} 6',
      'm{a="x"} 7',
      'm 8',
      'm{a="",b="x"} 9',
      'm{b="",a="x"} 10',
    ].join('\n');
    const { families, skipped } = parse(text);
    expect(skipped).toEqual([]);
    const all = [...families.values()].flatMap((f) => f.samples).sort((p, q) => p.value - q.value);
    expect(all.map((s) => [s.name, s.labels])).toEqual([
      ['m', { a: 'x', ab: 'y' }],
      ['m', { ab: 'x', a: 'y' }],
      ['m2', { a: 'xy' }],
      ['m', { a: 'x"y' }],
      ['m', { a: 'x' }],
      ['m:sub', { a: 'x\\' }],
      ['m', { a: 'x' }],
      ['m', {}],
      ['m', { a: '', b: 'x' }],
      ['m', { b: '', a: 'x' }],
    ]);
  });

  it('finds escapes after a backslash elsewhere in the text', () => {
    const text = '# HELP m back\\\\slash\nm{a="plain"} 1\nm{a="p\\nq",b="r"} 2\nm{a="plain",b="s\\\\"} 3\nm{a="t"} 4\n';
    expect(only(text).samples.map((s) => s.labels)).toEqual([{ a: 'plain' }, { a: 'p\nq', b: 'r' }, { a: 'plain', b: 's\\' }, { a: 't' }]);
  });

  it('omits timestampMs when there is none', () => {
    expect(only('m 1\n').samples[0]).not.toHaveProperty('timestampMs');
  });

  it('accepts names with colons, comments, blank lines, CRLF and a missing final newline', () => {
    const text = [
      '# a free comment',
      '',
      '   ',
      '# HELP vllm:num_requests_waiting Waiting requests.',
      '# TYPE vllm:num_requests_waiting gauge',
      'vllm:num_requests_waiting{engine="0",model_name="m"} 3',
      '#',
      'vllm:num_requests_waiting{engine="1",model_name="m"} 4',
    ].join('\r\n');
    const fam = only(text);
    expect(fam.help).toBe('Waiting requests.');
    expect(fam.type).toBe('gauge');
    expect(fam.samples.map((s) => [s.labels.engine, s.value])).toEqual([
      ['0', 3],
      ['1', 4],
    ]);
  });

  it('unescapes HELP', () => {
    const fam = only('# HELP m a \\\\ b\\nc \\t d\nm 1\n');
    expect(fam.help).toBe('a \\ b\nc \\t d');
  });

  it('gives untyped samples their own families, in order of appearance', () => {
    const { families } = parse('b 1\na_bucket{le="1"} 2\na_count 2\nb 2\n');
    expect([...families.values()].map((f) => [f.name, f.type, f.samples.length])).toEqual([
      ['b', 'untyped', 2],
      ['a_bucket', 'untyped', 1],
      ['a_count', 'untyped', 1],
    ]);
  });

  it('parses a 2,000-line exposition completely', () => {
    let text = '# HELP sglang:num_queue_reqs q\n# TYPE sglang:num_queue_reqs gauge\n';
    for (let i = 0; i < 2000; i++) {
      text += `sglang:num_queue_reqs{model_name="m",engine_type="unified",tp_rank="0",pp_rank="0",dp_rank="${i}"} ${i}\n`;
    }
    // Parse time is measured in perf/prometheus-parse.ts, not asserted here.
    expect(sumSamples(parsePrometheusText(text).get('sglang:num_queue_reqs'))).toBe((1999 * 2000) / 2);
  });

  it('skips long hostile lines without losing the good ones', () => {
    const long = 'x'.repeat(200_000);
    const text = `m{a="${long}\nm{${'a="b",'.repeat(20_000)}\n${'m'.repeat(200_000)} 1\n`;
    const { families, skipped } = parse(text);
    expect(skipped.map((s) => s.line)).toEqual([1, 2]);
    expect(families.get('m'.repeat(200_000))!.samples[0]!.value).toBe(1);
  });
});

describe('histograms in any order', () => {
  it('groups interleaved series, with _count and _sum before buckets and buckets out of order', () => {
    const text = [
      '# TYPE h histogram',
      'h_count{w="b"} 3',
      'h_bucket{w="a",le="+Inf"} 2',
      'h_sum{w="b"} 9.5',
      'h_bucket{le="2",w="b"} 3',
      'h_bucket{w="a",le="1"} 1',
      'h_bucket{w="b",le="1"} 0',
      'h_bucket{w="b",le="+Inf"} 3',
      'h_sum{w="a"} 1.5',
      'h_count{w="a"} 2',
      'h_bucket{w="a",le="2"} 2',
      'h_created{w="a"} 1700000000',
    ].join('\n');
    const fam = only(text);
    expect(fam.samples).toHaveLength(11);
    expect(histogramSeries(fam)).toEqual([
      {
        labels: { w: 'b' },
        buckets: [
          { le: 1, count: 0 },
          { le: 2, count: 3 },
          { le: Infinity, count: 3 },
        ],
        sum: 9.5,
        count: 3,
      },
      {
        labels: { w: 'a' },
        buckets: [
          { le: 1, count: 1 },
          { le: 2, count: 2 },
          { le: Infinity, count: 2 },
        ],
        sum: 1.5,
        count: 2,
      },
    ]);
  });

  it('groups label sets regardless of label order', () => {
    const fam = only('# TYPE h histogram\nh_bucket{a="1",b="2",le="+Inf"} 1\nh_count{b="2",a="1"} 1\nh_sum{b="2",a="1"} 4\n');
    expect(histogramSeries(fam)).toEqual([{ labels: { a: '1', b: '2' }, buckets: [{ le: Infinity, count: 1 }], sum: 4, count: 1 }]);
  });

  it('falls back to the +Inf bucket for count and NaN for a missing sum', () => {
    const [s] = histogramSeries(only('# TYPE h histogram\nh_bucket{le="1.0"} 1\nh_bucket{le="+Inf"} 5\n'));
    expect(s!.count).toBe(5);
    expect(s!.sum).toBeNaN();
  });

  it('groups summary _sum/_count under the summary family', () => {
    const fam = only('# TYPE s summary\ns{quantile="0.5"} 0.2\ns{quantile="0.99"} 0.9\ns_sum 12\ns_count 40\n');
    expect(fam.type).toBe('summary');
    expect(fam.samples).toHaveLength(4);
    expect(sumSamples(fam)).toBe(40);
  });
});

describe('OpenMetrics tolerance', () => {
  const text = [
    '# TYPE requests counter',
    '# UNIT requests requests',
    '# HELP requests Requests.',
    'requests_total{path="/"} 5 1700000000.5',
    'requests_created{path="/"} 1700000000.0',
    '# TYPE latency_seconds histogram',
    '# UNIT latency_seconds seconds',
    'latency_seconds_bucket{le="0.1"} 2 # {trace_id="abc"} 0.05 1700000000.0',
    'latency_seconds_bucket{le="+Inf"} 3',
    'latency_seconds_count 3',
    'latency_seconds_sum 0.9',
    'latency_seconds_created 1700000000.0',
    '# TYPE build info',
    'build_info{version="1.2"} 1',
    '# EOF',
    'ignored_after_eof 1',
    'garbage{',
  ].join('\n');
  const { families, skipped } = parse(text);

  it('parses everything up to # EOF', () => {
    expect(skipped).toEqual([]);
    expect([...families.keys()]).toEqual(['requests', 'latency_seconds', 'build']);
  });

  it('groups _total and _created under a counter declared without _total', () => {
    const fam = families.get('requests')!;
    expect(fam.type).toBe('counter');
    expect(fam.help).toBe('Requests.');
    expect(fam.samples.map((s) => s.name)).toEqual(['requests_total', 'requests_created']);
    expect(fam.samples[0]!.timestampMs).toBe(1700000000500);
    expect(sumSamples(fam)).toBe(5);
  });

  it('drops exemplars and keeps the histogram whole', () => {
    const [s] = histogramSeries(families.get('latency_seconds')!);
    expect(s).toEqual({
      labels: {},
      buckets: [
        { le: 0.1, count: 2 },
        { le: Infinity, count: 3 },
      ],
      sum: 0.9,
      count: 3,
    });
  });

  it('groups info samples under their family', () => {
    expect(families.get('build')!.samples[0]!.labels).toEqual({ version: '1.2' });
  });
});

describe('malformed lines are skipped and reported', () => {
  const bad: [string, RegExp][] = [
    ['m', /value expected/],
    ['m{a="1"}', /value expected/],
    ['m abc', /invalid value/],
    ['m 1 2 3', /unexpected text/],
    ['m 1 abc', /invalid timestamp/],
    ['m 1 +Inf', /invalid timestamp/],
    ['m{a="1} 1', /unterminated value/],
    ['m{a="1"', /unterminated label set/],
    ['m{a=1} 1', /quoted value/],
    ['m{a} 1', /"=" expected/],
    ['m{a="1" b="2"} 1', /"," or "}" expected/],
    ['m{,} 1', /label name expected/],
    ['m{1a="x"} 1', /label name expected/],
    ['m{a="1",a="2"} 1', /duplicate label a/],
    ['m{__proto__="x"} 1', /reserved/],
    ['m-x 1', /invalid character/],
    ['1m 1', /metric name expected/],
    ['{} 1', /metric name expected/],
    ['# TYPE m', /unknown type ""/],
    ['# TYPE m bogus', /unknown type "bogus"/],
    ['# TYPE m constructor', /unknown type "constructor"/],
    ['# TYPE m __proto__', /unknown type "__proto__"/],
    ['# TYPE m toString', /unknown type "toString"/],
    ['# TYPE m gauge extra', /trailing text/],
    ['# HELP', /invalid metric name/],
    ['# TYPE m-x gauge', /invalid metric name/],
  ];

  it.each(bad)('%j', (line, reason) => {
    const text = `ok 1\n${line}\nok 2\n`;
    const { families, skipped } = parse(text);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.line).toBe(2);
    expect(skipped[0]!.text).toBe(line);
    expect(skipped[0]!.reason).toMatch(reason);
    expect(families.get('ok')!.samples.map((s) => s.value)).toEqual([1, 2]);
    expect(families.get('m')?.samples ?? []).toEqual([]);
  });

  it('reports a duplicate # TYPE and keeps the first', () => {
    const { families, skipped } = parse('# TYPE m gauge\n# TYPE m counter\nm 1\n');
    expect(skipped.map((s) => s.reason)).toEqual(['duplicate # TYPE for m']);
    expect(families.get('m')!.type).toBe('gauge');
  });

  it('never throws without onError, and counts skipped lines when asked', () => {
    const text = 'a 1\nb{\nc 2\r\nd x\r\n\n{\ne 3';
    expect(() => parsePrometheusText(text)).not.toThrow();
    let count = 0;
    const families = parsePrometheusText(text, { onError: () => count++ });
    expect(count).toBe(3);
    expect([...families.keys()]).toEqual(['a', 'c', 'e']);
  });

  it('reports the line without its CR', () => {
    const { skipped } = parse('ok 1\r\nbroken{\r\n');
    expect(skipped).toEqual([{ line: 2, text: 'broken{', reason: 'unterminated label set' }]);
  });
});
