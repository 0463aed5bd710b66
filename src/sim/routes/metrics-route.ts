import { ExpositionWriter, PROMETHEUS_CONTENT_TYPE } from '../../prometheus/index.js';
import type { HistogramSeries, Labels, Sample } from '../../prometheus/index.js';
import { sendText } from '../http/responses.js';
import { TTFT_BUCKETS_S } from '../engine-params.js';
import type { SimEngine } from '../sim-engine.js';
import type { RouteHandler } from './route-context.js';

/** GET /metrics in the flavour's own names and labels, collected at scrape time. */
export const metrics: RouteHandler = (_req, res, _url, ctx) => {
  if (ctx.engine.controls.loadFault === 'garbage') {
    sendText(res, 200, 'sglang:num_queue_reqs{dp_rank="0" 7\nvllm:num_requests_waiting{{{ NaN\n', PROMETHEUS_CONTENT_TYPE);
    return;
  }
  if (ctx.engine.controls.loadFault === 'hang') return;
  const text = ctx.engine.flavor === 'vllm' ? vllmMetrics(ctx.engine) : sglangMetrics(ctx.engine);
  sendText(res, 200, text, PROMETHEUS_CONTENT_TYPE);
};

function sglangMetrics(e: SimEngine): string {
  const labels = (rank: number): Labels => ({
    model_name: e.model,
    engine_type: 'unified',
    tp_rank: '0',
    pp_rank: '0',
    ...(e.ranks.length > 1 ? { dp_rank: String(rank) } : {}),
  });
  const w = new ExpositionWriter();
  if (e.controls.loadReporting) {
    const loads = e.reportedLoads();
    const per = (f: (i: number) => number): Sample[] => loads.map((_, i) => ({ labels: labels(i), value: f(i) }));
    w.gauge('sglang:num_running_reqs', 'The number of running requests.', per((i) => loads[i]!.running))
      .gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', per((i) => loads[i]!.waiting))
      .gauge('sglang:num_used_tokens', 'The number of used tokens.', per((i) => loads[i]!.usedTokens))
      .gauge('sglang:token_usage', 'The token usage.', per((i) => loads[i]!.tokenUsage))
      .gauge('sglang:gen_throughput', 'The generation throughput (token/s).', per((i) => loads[i]!.genThroughput))
      .gauge('sglang:cache_hit_rate', 'The prefix cache hit rate.', per((i) => loads[i]!.cacheHitRate));
  }
  const counter = (f: (rank: number) => number): Sample[] => e.ranks.map((r) => ({ labels: labels(r.rank), value: f(r.rank) }));
  const c = (rank: number) => e.ranks[rank]!.counters;
  w.counter('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', counter((r) => c(r).promptTokensTotal))
    .counter('sglang:generation_tokens_total', 'Number of generation tokens processed.', counter((r) => c(r).generationTokensTotal))
    .counter('sglang:cached_tokens_total', 'Number of cached prompt tokens.', counter((r) => c(r).cachedTokensTotal))
    .counter('sglang:num_requests_total', 'Number of requests processed.', counter((r) => c(r).requestsTotal))
    .counter('sglang:num_aborted_requests_total', 'Number of requests aborted.', counter((r) => c(r).abortedTotal))
    .histogram('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', ttft(e, labels));
  return w.toString();
}

function vllmMetrics(e: SimEngine): string {
  const labels = (rank: number): Labels => ({ model_name: e.model, engine: String(rank) });
  const w = new ExpositionWriter();
  if (e.controls.loadReporting) {
    const loads = e.reportedLoads();
    const per = (f: (i: number) => number): Sample[] => loads.map((_, i) => ({ labels: labels(i), value: f(i) }));
    w.gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', per((i) => loads[i]!.running))
      .gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', per((i) => loads[i]!.waiting))
      .gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.', per((i) => loads[i]!.tokenUsage));
  }
  const counter = (f: (rank: number) => number): Sample[] => e.ranks.map((r) => ({ labels: labels(r.rank), value: f(r.rank) }));
  const c = (rank: number) => e.ranks[rank]!.counters;
  w.counter('vllm:prefix_cache_queries_total', 'Prefix cache queries, in terms of number of queried tokens.', counter((r) => c(r).promptTokensTotal))
    .counter('vllm:prefix_cache_hits_total', 'Prefix cache hits, in terms of number of cached tokens.', counter((r) => c(r).cachedTokensTotal))
    .counter('vllm:prompt_tokens_total', 'Number of prefill tokens processed.', counter((r) => c(r).promptTokensTotal))
    .counter('vllm:generation_tokens_total', 'Number of generation tokens processed.', counter((r) => c(r).generationTokensTotal))
    .histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', ttft(e, labels));
  return w.toString();
}

function ttft(e: SimEngine, labels: (rank: number) => Labels): HistogramSeries[] {
  return e.ranks.map((r) => ({
    labels: labels(r.rank),
    bounds: TTFT_BUCKETS_S,
    counts: r.counters.ttftCounts,
    sum: r.counters.ttftSumS,
  }));
}
