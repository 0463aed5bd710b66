import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseServerInfo, pushInfoFromRule } from '../../src/engines/index.js';
import type { PushInfo } from '../../src/engines/index.js';
import { choosePrefixSource } from '../../src/router/state/kv-index/index.js';
import type { PrefixSourceInputs } from '../../src/router/state/kv-index/index.js';
import type { WorkerInfo } from '../../src/router/upstream/worker.js';

/**
 * The prefix-source rule (docs/routing.md §Prefix from engine events) as a table, over
 * workers described by real engines' /server_info bodies (test/engines/fixtures, traced
 * to the engines' source there) and a vLLM --kv-events entry.
 */
const fixture = (name: string): PushInfo | null =>
  parseServerInfo(JSON.parse(readFileSync(new URL(`../engines/fixtures/${name}`, import.meta.url), 'utf8')))!.push;
const info = (over: Partial<WorkerInfo>): WorkerInfo => ({
  dpSize: 1,
  models: ['m'],
  flavor: 'sglang',
  nativeScheduling: false,
  push: null,
  pushFrom: null,
  simulated: false,
  ...over,
});

/** SGLang publishing in pages of 16 (load push on), and the live example's page size of 1. */
const SGLANG_16 = info({ push: fixture('sglang-server-info-load.json'), pushFrom: 'engine' });
const SGLANG_1 = info({ push: fixture('sglang-server-info-block1.json'), pushFrom: 'engine' });
const SGLANG_SILENT = info({ push: fixture('sglang-server-info-no-kv-events.json') });
const SIM = info({ push: fixture('sglang-server-info-load.json'), pushFrom: 'engine', simulated: true });
const VLLM = info({
  flavor: 'vllm',
  push: pushInfoFromRule({ workers: 'http://v', endpoint: 'tcp://*:5557', replayEndpoint: null, topic: '', dpSize: 1 }),
  pushFrom: 'config',
});
const VLLM_SILENT = info({ flavor: 'vllm' });

const at = (...infos: WorkerInfo[]) => infos.map((i, k) => ({ url: `http://w${k}`, info: i }));
const base: PrefixSourceInputs = { wanted: 'auto', usesPrefix: true, tokenizer: false, blockSize: 16 };

describe('choosePrefixSource', () => {
  it('the fixtures are what they claim', () => {
    expect([SGLANG_16.push?.blockSize, SGLANG_1.push?.blockSize, SGLANG_SILENT.push]).toEqual([16, 1, null]);
  });

  it.each<[string, WorkerInfo[], Partial<PrefixSourceInputs>, string]>([
    ['requests asked for', [SIM, SIM], { wanted: 'requests' }, 'requests'],
    ['a policy that reads no prefix', [SIM, SIM], { usesPrefix: false }, 'requests'],
    ['auto, simulators', [SIM, SIM], {}, 'events sim hash in blocks of 16'],
    ['auto, SGLang with a tokenizer', [SGLANG_16, SGLANG_16], { tokenizer: true }, 'events sglang hash in blocks of 16, model tokenizer'],
    ['auto, SGLang without a tokenizer: text could not be keyed', [SGLANG_16, SGLANG_16], {}, 'requests: text prompts cannot be keyed'],
    [
      'events, SGLang without a tokenizer: token ids only',
      [SGLANG_16, SGLANG_16],
      { wanted: 'events' },
      'events sglang hash in blocks of 16, no tokenizer',
    ],
    [
      'events, SGLang at its default page size of 1, --block-size 16',
      [SGLANG_1, SGLANG_1],
      { wanted: 'events' },
      'events sglang hash in blocks of 1, no tokenizer',
    ],
    ['auto, one worker silent', [SIM, SGLANG_SILENT], {}, 'requests: http://w1: publishes no KV events'],
    [
      'events, one worker silent: the other indexed',
      [SIM, SGLANG_SILENT],
      { wanted: 'events' },
      'events sim hash in blocks of 16; unindexed http://w1: publishes no KV events',
    ],
    ['two block sizes', [SGLANG_16, SGLANG_1], { wanted: 'events' }, 'requests: the workers name their KV blocks differently'],
    [
      'the simulator beside a real SGLang',
      [SIM, SGLANG_16],
      { wanted: 'events', tokenizer: true },
      'requests: the workers name their KV blocks differently',
    ],
    [
      'vLLM from --kv-events, at --block-size, with a tokenizer',
      [VLLM, VLLM],
      { tokenizer: true, blockSize: 32 },
      'events tokens hash in blocks of 32, model tokenizer',
    ],
    [
      'vLLM not named by --kv-events',
      [VLLM_SILENT],
      { wanted: 'events' },
      'requests: http://w0: publishes no KV events the router knows of',
    ],
    ['no workers', [], { wanted: 'events' }, 'requests: no workers'],
  ])('%s', (_, infos, over, expected) => {
    const c = choosePrefixSource(at(...infos), { ...base, ...over });
    const said =
      c.source === 'requests'
        ? `requests${c.reason === null ? '' : `: ${c.reason}`}`
        : `events ${c.keying.scheme} hash in blocks of ${c.keying.blockSize}${c.keying.tokenizer === 'stand-in' ? '' : c.keying.tokenizer === 'model' ? ', model tokenizer' : ', no tokenizer'}${c.unindexed.length > 0 ? `; unindexed ${c.unindexed.join('; ')}` : ''}`;
    expect(said.startsWith(expected), said).toBe(true);
    if (c.source === 'events') expect(c.attach.length + c.unindexed.length).toBe(infos.length);
  });
});

describe('the reason a large fleet is not indexed, in one log field', () => {
  const silent = (n: number) => Array.from({ length: n }, () => SGLANG_SILENT);
  it.each([
    [1, 'requests: http://w0: publishes no KV events'],
    [3, 'requests: http://w0: publishes no KV events; http://w1: publishes no KV events; http://w2: publishes no KV events'],
    [4, 'requests: publishes no KV events: 4 of 4 workers (http://w0, http://w1, http://w2 and 1 more)'],
    [4096, 'requests: publishes no KV events: 4,096 of 4,096 workers (http://w0, http://w1, http://w2 and 4,093 more)'],
  ])('%d silent workers', (n, expected) => {
    const c = choosePrefixSource(at(...silent(n)), base);
    expect(c.source === 'requests' ? `requests: ${c.reason}` : 'events').toBe(expected);
  });

  it('several causes are each named once, with their counts', () => {
    const c = choosePrefixSource(at(VLLM_SILENT, ...silent(5)), base);
    expect(c.source === 'requests' && c.reason).toBe(
      'publishes no KV events the router knows of (its /kv_event_sources names none: name them with --kv-events): 1 of 6 workers (http://w0); publishes no KV events: 5 of 6 workers (http://w1, http://w2, http://w3 and 2 more)',
    );
  });
});
