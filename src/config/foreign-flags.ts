/**
 * Flags of the Rust sgl-router that routerctl does not have (docs/configuration.md
 * §Command-line flags).
 * Operators port launch scripts between the two; "unknown flag" alone would send
 * them hunting for a typo, so these say why the flag is absent and what to use.
 * Used for command-line flags and rc keys alike.
 */
export const FOREIGN_FLAGS: ReadonlyMap<string, string> = new Map([
  ['chat-routing', 'routerctl has no reorg mode; --policy selects the implementation'],
  ['service-discovery', 'routerctl discovers workers only through --worker-urls'],
  ['tokenizer-path', 'the router keys prefixes on input_ids or the rendered prompt and needs no tokenizer'],
  ['cache-threshold', 'removed from the reference router; use --cache-affinity-min-match-ratio'],
  ['balance-abs-threshold', 'removed from the reference router; use --worker-queue-limit'],
  ['balance-rel-threshold', 'removed from the reference router; use --worker-queue-limit'],
  ['cache-prefix-provider', 'routerctl always uses its own prefix index (--block-size, --prefix-index-max-blocks)'],
  ['kv-indexer-endpoint', 'routerctl always uses its own prefix index'],
  ['dp-size', 'DP size is read from each worker (/server_info); scale --worker-queue-limit with it'],
]);
