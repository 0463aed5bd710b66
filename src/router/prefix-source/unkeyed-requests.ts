import type { Logger } from '../logging/logger.js';
import type { RouterMetrics } from '../metrics/index.js';
import type { UnkeyedReason } from '../request/request-keying.js';

const WARNINGS: Record<UnkeyedReason, string> = {
  no_tokenizer:
    'a text request cannot be keyed as the engines name their KV blocks without --tokenizer; it and others like it are routed without prefix affinity (sgl_router_prefix_unkeyed_requests_total)',
  unsupported_input:
    'a chat with non-text content cannot be tokenized as the engine does; it and others like it are routed without prefix affinity (sgl_router_prefix_unkeyed_requests_total)',
};

/** Requests the keying could not key (docs/routing.md §Keying requests): each counted, each kind said once. */
export class UnkeyedRequests {
  private readonly warned = new Set<UnkeyedReason>();

  constructor(
    private readonly metrics: RouterMetrics,
    private readonly log: Logger,
  ) {}

  seen(reason: UnkeyedReason): void {
    this.metrics.unkeyedRequests.inc([reason]);
    if (this.warned.has(reason)) return;
    this.warned.add(reason);
    this.log.warn(WARNINGS[reason], { reason });
  }
}
