import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PythonExposition, floatToGoString, pythonFloatRepr } from '../../src/sim/http/python-exposition.js';
import { parsePrometheusText } from '../../src/prometheus/index.js';

// Expected strings are what Python's prometheus_client writes (docs/simulator.md §/metrics).
describe('floatToGoString', () => {
  it.each([
    [0, '0.0'],
    [1, '1.0'],
    [4, '4.0'],
    [12, '12.0'],
    [0.1, '0.1'],
    [1e-5, '1e-05'],
    [1.5e-5, '1.5e-05'],
    [0.0001, '0.0001'],
    [123456, '123456.0'],
    [1234567, '1.234567e+06'],
    [1048576, '1.048576e+06'],
    [12884901888, '1.2884901888e+010'],
    [1722900123.4567, '1.7229001234567e+09'],
    [1e15, '1e+015'],
    [1e16, '1e+16'],
    [1e22, '1e+22'],
    [-1, '-1.0'],
    [-1234567, '-1234567.0'],
    [-1e-7, '-1e-07'],
    [0.62, '0.62'],
    [528.4499999999999, '528.4499999999999'],
    [2560, '2560.0'],
    [0.1 + 0.2, '0.30000000000000004'],
    [2 ** 53, '9.007199254740992e+015'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
    [NaN, 'NaN'],
    [5e-324, '5e-324'],
  ])('%s → %s', (v, want) => {
    expect(floatToGoString(v)).toBe(want);
  });

  it('repr keeps the sign of zero and Python exponent thresholds', () => {
    expect(pythonFloatRepr(-0)).toBe('-0.0');
    expect(pythonFloatRepr(1e-4)).toBe('0.0001');
    expect(pythonFloatRepr(9.99e-5)).toBe('9.99e-05');
    expect(pythonFloatRepr(123456789012345.6)).toBe('123456789012345.6');
    expect(pythonFloatRepr(1.5e100)).toBe('1.5e+100');
  });
});

describe('PythonExposition', () => {
  it('writes byte for byte what prometheus_client writes for the same registry', () => {
    const created = 1722900123.4567;
    const sched = (dp: string) => ({ model_name: 'm', engine_type: 'unified', tp_rank: '0', pp_rank: '0', moe_ep_rank: '0', dp_rank: dp });
    const bounds = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400];
    const counts = new Array<number>(bounds.length + 1).fill(0);
    let sum = 0;
    for (const v of [0.05, 0.3, 1.5, 500]) {
      let i = 0;
      while (i < bounds.length && v > bounds[i]!) i++;
      counts[i]!++;
      sum += v;
    }
    const odd = 'q"x\\y';
    const text = new PythonExposition()
      .gauge('sglang:num_running_reqs', 'The number of running requests.', [
        { labels: sched('0'), value: 12 },
        { labels: sched('1'), value: 0 },
      ])
      .gauge('sglang:token_usage', 'The token usage.', [
        { labels: sched('0'), value: 0.0123 },
        { labels: sched('1'), value: 1e-5 },
      ])
      .counter('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', [
        { labels: { model_name: 'm' }, value: 1234567, created },
      ])
      .histogram('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', [
        { labels: { model_name: 'm' }, bounds, counts, sum, created },
      ])
      .counter('vllm:request_success', 'Count of successfully processed requests.', [
        { labels: { model_name: odd, engine: '0', finished_reason: 'stop' }, value: 3, created },
        { labels: { model_name: odd, engine: '0', finished_reason: 'length' }, value: 0, created },
      ])
      .toString();
    const golden = readFileSync(new URL('./fixtures/python-client-golden.txt', import.meta.url), 'utf8');
    expect(text).toBe(golden);
  });

  it('what it writes reads back through our own parser', () => {
    const text = new PythonExposition()
      .counter('vllm:prompt_tokens', 'Prompt tokens.', [{ labels: { engine: '0', model_name: 'm' }, value: 1048576, created: 1.7e9 }])
      .histogram('vllm:e2e_request_latency_seconds', 'e2e.', [
        { labels: { engine: '0', model_name: 'm' }, bounds: [0.3, 1], counts: [1, 2, 3], sum: 12.5, created: 1.7e9 },
      ])
      .toString();
    const errors: string[] = [];
    const f = parsePrometheusText(text, { onError: (_l, t) => errors.push(t) });
    expect(errors).toEqual([]);
    expect(f.get('vllm:prompt_tokens_total')!.samples[0]!.value).toBe(1048576);
    expect(f.get('vllm:prompt_tokens_created')!.type).toBe('gauge');
    const h = f.get('vllm:e2e_request_latency_seconds')!;
    expect(h.type).toBe('histogram');
    expect(h.samples.find((s) => s.labels.le === '+Inf')!.value).toBe(6);
  });
});
