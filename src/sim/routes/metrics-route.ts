import { PROMETHEUS_CONTENT_TYPE } from '../../prometheus/index.js';
import { sendText } from '../http/responses.js';
import type { EngineCounters, Histogram } from '../engine-metrics.js';
import { PythonExposition } from '../http/python-exposition.js';
import type { PyCounterSample, PyHistogramSeries, PyLabels, PySample } from '../http/python-exposition.js';
import type { SimEngine } from '../sim-engine.js';
import type { RouteHandler } from './route-context.js';

/** GET /metrics in the flavour's own names, labels and buckets, collected at scrape time. */
export const metrics: RouteHandler = (_req, res, _url, ctx) => {
  if (ctx.engine.controls.loadFault === 'garbage') {
    sendText(res, 200, 'sglang:num_queue_reqs{dp_rank="0" 7\nvllm:num_requests_waiting{{{ NaN\n', PROMETHEUS_CONTENT_TYPE);
    return;
  }
  if (ctx.engine.controls.loadFault === 'hang') return;
  const text = ctx.engine.flavor === 'vllm' ? vllmMetrics(ctx.engine) : sglangMetrics(ctx.engine);
  sendText(res, 200, text, PROMETHEUS_CONTENT_TYPE);
};

type CounterName = 'requestsTotal' | 'abortedTotal' | 'promptTokensTotal' | 'cachedTokensTotal' | 'generationTokensTotal';
type HistogramName = 'ttft' | 'itl' | 'e2e' | 'queue';

/**
 * SGLang: scheduler gauges per DP rank (labels model_name, engine_type, tp_rank,
 * pp_rank, moe_ep_rank, and dp_rank when there is more than one), and the tokenizer's
 * counters and histograms once per server, labelled model_name only, since one
 * tokenizer process serves every rank.
 */
function sglangMetrics(e: SimEngine): string {
  const scheduler = (rank: number): PyLabels => ({
    model_name: e.model,
    engine_type: 'unified',
    tp_rank: '0',
    pp_rank: '0',
    moe_ep_rank: '0',
    ...(e.ranks.length > 1 ? { dp_rank: String(rank) } : {}),
  });
  const tokenizer: PyLabels = { model_name: e.model };
  const created = e.startedAt / 1000;
  const w = new PythonExposition();
  if (e.controls.loadReporting) {
    const loads = e.reportedLoads();
    const per = (f: (i: number) => number): PySample[] => loads.map((_, i) => ({ labels: scheduler(i), value: f(i) }));
    w.gauge(
      'sglang:num_running_reqs',
      'The number of running requests.',
      per((i) => loads[i]!.running),
    )
      .gauge(
        'sglang:num_used_tokens',
        'The number of used tokens.',
        per((i) => loads[i]!.usedTokens),
      )
      .gauge(
        'sglang:token_usage',
        'The token usage.',
        per((i) => loads[i]!.tokenUsage),
      )
      .gauge(
        'sglang:gen_throughput',
        'The generation throughput (token/s).',
        per((i) => loads[i]!.genThroughput),
      )
      .gauge(
        'sglang:num_queue_reqs',
        'The number of requests in the waiting queue.',
        per((i) => loads[i]!.waiting),
      )
      .gauge(
        'sglang:num_grammar_queue_reqs',
        'The number of requests in the grammar waiting queue.',
        per(() => 0),
      )
      .gauge(
        'sglang:cache_hit_rate',
        'The prefix cache hit rate.',
        per((i) => loads[i]!.cacheHitRate),
      )
      .gauge(
        'sglang:max_total_num_tokens',
        'Maximum total number of tokens in the KV cache pool.',
        per((i) => loads[i]!.maxTotalTokens),
      )
      .gauge(
        'sglang:num_retracted_reqs',
        'The number of retracted requests.',
        per(() => 0),
      );
  }
  const total = (name: CounterName): PyCounterSample[] => [
    { labels: tokenizer, value: sum(e.ranks.map((r) => r.counters[name])), created },
  ];
  const merged = (name: HistogramName): PyHistogramSeries[] => [
    { labels: tokenizer, ...mergeHistograms(e.ranks.map((r) => r.counters[name])), created },
  ];
  w.counter('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', total('promptTokensTotal'))
    .counter('sglang:generation_tokens_total', 'Number of generation tokens processed.', total('generationTokensTotal'))
    .counter('sglang:cached_tokens_total', 'Number of cached prompt tokens.', total('cachedTokensTotal'))
    .counter('sglang:num_requests_total', 'Number of requests processed.', total('requestsTotal'))
    .counter('sglang:num_aborted_requests_total', 'Number of requests aborted.', total('abortedTotal'))
    .histogram('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', merged('ttft'))
    .histogram('sglang:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', merged('itl'))
    .histogram('sglang:e2e_request_latency_seconds', 'Histogram of End-to-end request latency in seconds', merged('e2e'));
  return w.toString();
}

/** vLLM: every series per DP engine, labelled engine and model_name. */
function vllmMetrics(e: SimEngine): string {
  const labels = (rank: number): PyLabels => ({ model_name: e.model, engine: String(rank) });
  const created = e.startedAt / 1000;
  const w = new PythonExposition();
  if (e.controls.loadReporting) {
    const loads = e.reportedLoads();
    const per = (f: (i: number) => number): PySample[] => loads.map((_, i) => ({ labels: labels(i), value: f(i) }));
    w.gauge(
      'vllm:num_requests_running',
      'Number of requests in model execution batches.',
      per((i) => loads[i]!.running),
    )
      .gauge(
        'vllm:num_requests_waiting',
        'Number of requests waiting to be processed.',
        per((i) => loads[i]!.waiting),
      )
      .gauge(
        'vllm:kv_cache_usage_perc',
        'KV-cache usage. 1 means 100 percent usage.',
        per((i) => loads[i]!.tokenUsage),
      );
  }
  const counter = (f: (c: EngineCounters) => number): PyCounterSample[] =>
    e.ranks.map((r) => ({ labels: labels(r.rank), value: f(r.counters), created }));
  const histogram = (name: HistogramName): PyHistogramSeries[] =>
    e.ranks.map((r) => {
      const h = r.counters[name];
      return { labels: labels(r.rank), bounds: h.bounds, counts: h.counts, sum: h.sum, created };
    });
  const success: PyCounterSample[] = e.ranks.flatMap((r) => [
    { labels: { ...labels(r.rank), finished_reason: 'stop' }, value: r.counters.finishedStopTotal, created },
    { labels: { ...labels(r.rank), finished_reason: 'length' }, value: r.counters.finishedLengthTotal, created },
  ]);
  const p = e.params;
  w.counter(
    'vllm:num_preemptions',
    'Cumulative number of preemption from the engine.',
    counter(() => 0),
  )
    .counter(
      'vllm:prompt_tokens',
      'Number of prefill tokens processed.',
      counter((c) => c.promptTokensTotal),
    )
    .counter(
      'vllm:generation_tokens',
      'Number of generation tokens processed.',
      counter((c) => c.generationTokensTotal),
    )
    .counter('vllm:request_success', 'Count of successfully processed requests.', success)
    .counter(
      'vllm:admission_rejections',
      'Number of admission attempts rejected by a queue limit, by reason.',
      // The API server counts these, for the whole engine: no engine label.
      [
        {
          labels: { model_name: e.model, reason: 'max_num_queued_reqs' },
          value: sum(e.ranks.map((r) => r.counters.admissionRejectedTotal)),
          created,
        },
        { labels: { model_name: e.model, reason: 'max_num_queued_tokens' }, value: 0, created },
      ],
    )
    .counter(
      'vllm:prefix_cache_queries',
      'Prefix cache queries, in terms of number of queried tokens.',
      counter((c) => c.promptTokensTotal),
    )
    .counter(
      'vllm:prefix_cache_hits',
      'Prefix cache hits, in terms of number of cached tokens.',
      counter((c) => c.cachedTokensTotal),
    )
    .gauge(
      'vllm:cache_config_info',
      'Information of the LLMEngine CacheConfig',
      e.ranks.map((r) => ({
        labels: {
          block_size: String(p.blockSize),
          cache_dtype: 'auto',
          enable_prefix_caching: 'True',
          engine: String(r.rank),
          gpu_memory_utilization: '0.9',
          num_gpu_blocks: String(p.kvBlocks),
        },
        value: 1,
      })),
    )
    .histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', histogram('ttft'))
    .histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', histogram('itl'))
    .histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', histogram('e2e'))
    .histogram('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', histogram('queue'));
  return w.toString();
}

function sum(values: readonly number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}

/** One histogram over every rank (they share bounds). */
function mergeHistograms(hs: readonly Histogram[]): Pick<PyHistogramSeries, 'bounds' | 'counts' | 'sum'> {
  const first = hs[0]!;
  const counts = new Array<number>(first.counts.length).fill(0);
  let total = 0;
  for (const h of hs) {
    for (let i = 0; i < counts.length; i++) counts[i] = counts[i]! + h.counts[i]!;
    total += h.sum;
  }
  return { bounds: first.bounds, counts, sum: total };
}
