import type { RouterConfig } from '../../config/index.js';
import { replayEndpoints } from '../../engines/index.js';
import { engineBlockKeys } from '../../prefix/index.js';
import type { ChatTokenizer } from '../../tokenizer/index.js';
import type { Logger } from '../logging/logger.js';
import type { Relay } from '../proxy/relay.js';
import { choosePrefixSource, eventFormat, eventKeying, keyingName, PredictedPrefixes } from '../state/kv-index/index.js';
import type { EventKeying, KvEventIndex } from '../state/kv-index/index.js';
import type { Worker } from '../upstream/worker.js';
import type { WorkerRegistry } from '../workers/worker-registry.js';
import type { PrefixState } from './prefix-state.js';
import { promptTokenizer } from './prompt-tokenizer.js';

export interface PrefixSourceDeps {
  readonly config: Pick<RouterConfig, 'prefixSource' | 'blockSize' | 'predictedPrefixTtlMs'>;
  /** The model's tokenizer, when --tokenizer was given and loaded. */
  readonly tokenizer: ChatTokenizer | undefined;
  readonly registry: WorkerRegistry;
  readonly relay: Relay;
  readonly kvIndex: KvEventIndex;
  readonly log: Logger;
}

/** Requests remembered at once for the event gap: far more than arrive within one prefill. */
const PREDICTED_PREFIXES = 4096;

/**
 * Apply `--prefix-source` once the workers have said what they are
 * (choosePrefixSource: docs/routing.md §Prefix from engine events), into `prefix`,
 * and say what was chosen and why. Under events, the workers' feeds are attached,
 * the relay stops recording owners, the event gap's predicted entries start, and a
 * worker introspected later joins when it keys alike.
 */
export function applyPrefixSource(prefix: PrefixState, d: PrefixSourceDeps): void {
  const c = d.config;
  const inputs = { wanted: c.prefixSource, usesPrefix: d.relay.usesPrefix, tokenizer: d.tokenizer !== undefined, blockSize: c.blockSize };
  const choice = choosePrefixSource(d.registry.workers, inputs);
  // Either index learns a prefix only some time after the request is sent (an engine's
  // event after its prefill, a served request at its first byte): until then the router
  // remembers where it sent what (docs/routing.md §The event gap).
  if (c.predictedPrefixTtlMs > 0 && d.relay.usesPrefix)
    prefix.lookup.predicted = new PredictedPrefixes({
      ttlMs: c.predictedPrefixTtlMs,
      capacity: PREDICTED_PREFIXES,
      now: () => performance.now(),
    });
  if (choice.source === 'requests') {
    if (choice.reason !== null)
      (c.prefixSource === 'events' ? d.log.warn : d.log.info)('prefix index built from requests, not KV events', {
        prefix_source: c.prefixSource,
        reason: choice.reason,
      });
    return;
  }
  const { keying, attach, unindexed, unindexedText } = choice;
  const { scheme, blockSize } = keying;
  prefix.source = 'events';
  prefix.keying = {
    by: 'tokens',
    blockSize,
    tokenizer: promptTokenizer(keying.tokenizer, d.tokenizer),
    keys: (tokens) => engineBlockKeys(tokens, blockSize, scheme),
  };
  d.relay.recordsOwners = false;
  if (unindexed.length > 0)
    d.log.warn('KV events: some workers are not indexed (they never count as prefix owners)', { workers: unindexedText });
  d.log.info('prefix index built from KV events', {
    workers: attach.length,
    hash: scheme,
    block_size: blockSize,
    tokenizer: keying.tokenizer,
  });
  if (keying.tokenizer === 'none')
    d.log.warn(
      'KV events without --tokenizer: token-id requests are keyed as the engines name their blocks; text prompts are routed without prefix affinity (sgl_router_prefix_unkeyed_requests_total)',
    );
  // A worker introspected later (it was down at start) joins once its facts are known.
  d.registry.onIntrospected = (w) => {
    const v = eventKeying(w.info, inputs).keying;
    if (v !== undefined && keyingName(v) === keyingName(keying)) attachEvents(w, v, d);
  };
  for (const w of attach) attachEvents(w, keying, d);
}

function attachEvents(w: Worker, keying: EventKeying, d: PrefixSourceDeps): void {
  const push = w.info.push!;
  const replay = replayEndpoints(w.url, push);
  // Where they were found is logged with the worker's channels (worker-registry); their absence costs every later replica.
  if (replay.length === 0)
    d.log.warn('KV events: no replay endpoint known; a router replica started later begins empty', { worker: w.url });
  d.kvIndex.attach(w, {
    info: push,
    engine: eventFormat(w.info),
    replayEndpoints: replay,
    keying: keying.scheme === 'tokens' ? 'tokens' : 'engine_hash',
    blockSize: keying.blockSize,
  });
}
