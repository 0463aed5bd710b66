/**
 * The four labels of sgl_router_cache_aware_decisions_total, in the order every
 * table, chart and JSON document shows them (docs/routing.md §Decision mapping).
 * The router books them, the console, bench and the virtual runs read them: this
 * is their one spelling.
 */
export const DECISIONS = ['cache_hit', 'cache_miss', 'cache_worker_queued', 'all_queued'] as const;

export type Decision = (typeof DECISIONS)[number];
