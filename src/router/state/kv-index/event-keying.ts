import type { EngineHashScheme } from '../../../prefix/index.js';
import type { WorkerInfo } from '../../upstream/worker.js';

/**
 * How a worker's KV events are keyed: the engine's hash scheme, the block size it
 * advertises, and whose tokenizer keys text requests (`none`: only token ids can be).
 */
export interface EventKeying {
  readonly scheme: EngineHashScheme;
  readonly blockSize: number;
  readonly tokenizer: 'stand-in' | 'model' | 'none';
}

/** What the prefix-source rule needs of a worker. */
export interface SourceCandidate {
  readonly url: string;
  readonly info: WorkerInfo;
}

/** What the index is built from, how its keys are made (null: from request text), and whose events to attach. */
export type PrefixSourceChoice<W extends SourceCandidate> =
  | {
      readonly source: 'requests';
      readonly keying: null;
      readonly attach: readonly [];
      /** Why not events; null when events were never in question (`requests`, or a policy that reads no prefix). */
      readonly reason: string | null;
    }
  | {
      readonly source: 'events';
      readonly keying: EventKeying;
      /** The workers whose events feed the index. */
      readonly attach: readonly W[];
      /** `URL: why` for each worker that is not indexed (under `events` only: they never count as prefix owners). */
      readonly unindexed: readonly string[];
      /** `unindexed` as one log field, summarized by cause on a large fleet. */
      readonly unindexedText: string;
    };

export interface PrefixSourceInputs {
  readonly wanted: 'requests' | 'events' | 'auto';
  /** The policy reads a prefix at all. */
  readonly usesPrefix: boolean;
  /** `--tokenizer` was given (and loaded). */
  readonly tokenizer: boolean;
  /** `--block-size`: the block size of engines that advertise none. */
  readonly blockSize: number;
}

/**
 * `--prefix-source` (docs/routing.md §Prefix from engine events), decided once from
 * what the workers said of themselves: events when they publish KV events the router
 * can key, all naming their blocks alike (one scheme, one block size, one tokenizer).
 * `auto` takes events only when every worker does and text prompts can be keyed too;
 * `events` indexes the ones that do, and keys only token ids when there is no
 * tokenizer (docs/routing.md §Keying requests). Pure: the router applies the choice.
 */
export function choosePrefixSource<W extends SourceCandidate>(workers: readonly W[], o: PrefixSourceInputs): PrefixSourceChoice<W> {
  const requests = (reason: string | null): PrefixSourceChoice<W> => ({ source: 'requests', keying: null, attach: [], reason });
  if (o.wanted === 'requests' || !o.usesPrefix) return requests(null);
  const verdicts = workers.map((w) => ({ w, ...eventKeying(w.info, o) }));
  const able = verdicts.filter((v) => v.keying !== undefined);
  const kinds = new Set(able.map((v) => keyingName(v.keying!)));
  const out = verdicts.filter((v) => v.keying === undefined).map((v) => ({ url: v.w.url, why: v.why ?? 'cannot be indexed' }));
  const unindexed = out.map((v) => `${v.url}: ${v.why}`);
  const keying = able[0]?.keying;
  if (keying === undefined) return requests(out.length > 0 ? whyUnindexed(out, verdicts.length) : 'no workers');
  if (kinds.size > 1) return requests(`the workers name their KV blocks differently (${[...kinds].join('; ')})`);
  if (o.wanted === 'auto' && out.length > 0) return requests(whyUnindexed(out, verdicts.length));
  if (o.wanted === 'auto' && keying.tokenizer === 'none') {
    return requests(
      'text prompts cannot be keyed as the engines tokenize them without --tokenizer; give --tokenizer, or --prefix-source events to index token-id traffic only',
    );
  }
  return { source: 'events', keying, attach: able.map((v) => v.w), unindexed, unindexedText: whyUnindexed(out, verdicts.length) };
}

/** Workers named one by one in the reason, up to this many; past it, by cause with a few examples. */
const NAMED_WORKERS = 3;

/**
 * Why workers' KV events cannot feed the index, as one log field: each worker with its
 * reason when there are few, else each reason once with its count and a few URLs
 * (a line that named 4,096 workers was 200 KB of log).
 */
export function whyUnindexed(out: ReadonlyArray<{ readonly url: string; readonly why: string }>, fleet: number): string {
  if (out.length <= NAMED_WORKERS) return out.map((v) => `${v.url}: ${v.why}`).join('; ');
  const byWhy = new Map<string, string[]>();
  for (const v of out) {
    const urls = byWhy.get(v.why) ?? [];
    urls.push(v.url);
    byWhy.set(v.why, urls);
  }
  const count = (n: number): string => n.toLocaleString('en-US');
  return [...byWhy]
    .map(([why, urls]) => {
      const more = urls.length > NAMED_WORKERS ? ` and ${count(urls.length - NAMED_WORKERS)} more` : '';
      return `${why}: ${count(urls.length)} of ${count(fleet)} workers (${urls.slice(0, NAMED_WORKERS).join(', ')}${more})`;
    })
    .join('; ');
}

/**
 * Whether one worker's KV events can feed the index, and how they are keyed: at the
 * block size it advertises (vLLM's from its /metrics, else `--block-size`), with its
 * engine's hash, and the simulator's stand-in tokenizer or the model's.
 */
export function eventKeying(
  info: WorkerInfo,
  o: Pick<PrefixSourceInputs, 'tokenizer' | 'blockSize'>,
): { keying?: EventKeying; why?: string } {
  const push = info.push;
  const vllm = eventFormat(info) === 'vllm';
  if (push === null)
    return {
      why: vllm
        ? 'publishes no KV events the router knows of (its /kv_event_sources names none: name them with --kv-events)'
        : 'publishes no KV events',
    };
  const blockSize = push.blockSize ?? o.blockSize;
  // vLLM's hashes cannot be computed outside the engine (its default pickles Python objects, its root is random per process): key its blocks by their tokens.
  const scheme: EngineHashScheme = vllm ? 'tokens' : info.simulated ? 'sim' : 'sglang';
  if (info.simulated) return { keying: { scheme, blockSize, tokenizer: 'stand-in' } };
  return { keying: { scheme, blockSize, tokenizer: o.tokenizer ? 'model' : 'none' } };
}

/** Two workers' events can share one index when these are equal. */
export function keyingName(k: EventKeying): string {
  return `${k.scheme} hash in blocks of ${k.blockSize}${k.tokenizer === 'stand-in' ? '' : k.tokenizer === 'model' ? ', model tokenizer' : ', no tokenizer'}`;
}

/** The event format a worker writes: its flavour's; an unknown engine named in --kv-events is taken for vLLM (SGLang advertises its own). */
export function eventFormat(info: WorkerInfo): 'sglang' | 'vllm' {
  if (info.flavor !== 'unknown') return info.flavor;
  return info.pushFrom === 'config' ? 'vllm' : 'sglang';
}
