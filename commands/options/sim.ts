import type { Options } from 'yargs';
import { numberGreaterThan, portNumber, wholeNumber, wholeNumberAtLeast, wholeNumberAtLeastOrOff } from '../../src/cli/index.js';
import { DEFAULT_ENGINE_PARAMS, SCHEDULE_POLICIES, SGLANG_SCHEDULER_DEFAULTS, VLLM_SCHEDULER_DEFAULTS } from '../../src/sim/flags/index.js';

// `routerctl sim`'s flags, read by its yargs builder and by the man page generator (OPTIONS).

export const SIM_OPTIONS = {
  workers: {
    alias: 'n',
    type: 'number',
    default: 4,
    describe: 'number of engines',
    coerce: wholeNumberAtLeast('workers', 1),
  },
  'port-base': {
    type: 'number',
    default: 31000,
    describe: 'port of the first engine (the others follow); 0 picks free ports',
    coerce: portNumber('port-base'),
  },
  host: { type: 'string', default: '127.0.0.1', describe: 'address to listen on' },
  flavor: { choices: ['sglang', 'vllm'], default: 'sglang', describe: 'API and metrics to speak' },
  model: { type: 'string', default: 'sim-llama-3.1-8b', describe: 'served model name' },
  'dp-size': {
    type: 'number',
    default: 1,
    describe: 'data-parallel ranks per engine',
    coerce: wholeNumberAtLeast('dp-size', 1),
  },
  'max-running': {
    type: 'number',
    default: DEFAULT_ENGINE_PARAMS.maxRunning,
    describe: 'running-batch cap per rank (SGLang --max-running-requests, vLLM --max-num-seqs)',
    coerce: wholeNumberAtLeast('max-running', 1),
  },
  'kv-blocks': {
    type: 'number',
    defaultDescription: String(DEFAULT_ENGINE_PARAMS.kvBlocks),
    describe: 'KV cache blocks per rank (vLLM --num-gpu-blocks-override)',
    coerce: wholeNumberAtLeast('kv-blocks', 1),
  },
  'max-total-tokens': {
    type: 'number',
    describe: 'KV cache size per rank in tokens, instead of --kv-blocks (SGLang --max-total-tokens)',
    coerce: wholeNumberAtLeast('max-total-tokens', 1),
  },
  'block-size': {
    type: 'number',
    default: DEFAULT_ENGINE_PARAMS.blockSize,
    describe: 'tokens per KV block',
    coerce: wholeNumberAtLeast('block-size', 1),
  },
  'context-length': {
    type: 'number',
    default: DEFAULT_ENGINE_PARAMS.maxModelLen,
    describe:
      "the model's context length (SGLang --context-length, vLLM --max-model-len): a longer prompt plus max_tokens is refused with the engine's own 400",
    coerce: wholeNumberAtLeast('context-length', 2),
  },
  'schedule-policy': {
    choices: SCHEDULE_POLICIES,
    default: SGLANG_SCHEDULER_DEFAULTS.schedulePolicy,
    describe: 'SGLang waiting-queue order: arrival (fcfs) or longest cached prefix (lpm)',
  },
  'max-prefill-tokens': {
    type: 'number',
    defaultDescription: String(SGLANG_SCHEDULER_DEFAULTS.maxPrefillTokens),
    describe: 'SGLang: input-token budget of one prefill batch',
    coerce: wholeNumberAtLeast('max-prefill-tokens', 1),
  },
  'chunked-prefill-size': {
    type: 'number',
    defaultDescription: String(SGLANG_SCHEDULER_DEFAULTS.chunkedPrefillSize),
    describe: 'SGLang: prompt tokens computed per step; -1 turns chunking off',
    coerce: wholeNumberAtLeastOrOff('chunked-prefill-size', 1, -1),
  },
  'max-num-batched-tokens': {
    type: 'number',
    defaultDescription: String(VLLM_SCHEDULER_DEFAULTS.maxNumBatchedTokens),
    describe: 'vLLM: tokens scheduled per step, decodes and prefill chunks together',
    coerce: wholeNumberAtLeast('max-num-batched-tokens', 1),
  },
  'max-num-queued-reqs': {
    type: 'number',
    defaultDescription: 'none',
    describe: 'vLLM: unfinished requests (waiting and running) past which a request is refused with 503, as vLLM --max-num-queued-reqs',
    coerce: wholeNumberAtLeast('max-num-queued-reqs', 0),
  },
  'long-prefill-token-threshold': {
    type: 'number',
    defaultDescription: `${VLLM_SCHEDULER_DEFAULTS.longPrefillTokenThreshold} (no cap)`,
    describe: "vLLM: cap on one request's prefill chunk per step",
    coerce: wholeNumberAtLeast('long-prefill-token-threshold', 0),
  },
  speedup: {
    type: 'number',
    default: 1,
    describe: 'run simulated time this many times faster than real time',
    coerce: numberGreaterThan('speedup', 0),
  },
  seed: { type: 'number', default: 42, describe: 'random seed (output lengths, text)', coerce: wholeNumber('seed') },
  'kv-events': {
    type: 'boolean',
    default: false,
    describe:
      'publish KV cache events over ZMQ (BlockStored, BlockRemoved, AllBlocksCleared), with a replay socket; /server_info advertises them',
  },
  'kv-events-format': {
    choices: ['array', 'map'],
    default: 'array',
    describe: 'KV events positional (array) or tagged (map), as engines before and after the format change write them',
  },
  'kv-events-topic': { type: 'string', default: '', describe: 'topic of the KV event messages' },
  'kv-events-port': {
    type: 'number',
    describe: "first port of the push channels (KV ranks, replay ranks, load ranks; the next engine's follow); free ports when unset",
    coerce: wholeNumberAtLeast('kv-events-port', 1),
  },
  'kv-events-buffer': {
    type: 'number',
    defaultDescription: '10000',
    describe: "batches each rank's replay socket keeps (SGLang's buffer_steps); needs --kv-events",
    coerce: wholeNumberAtLeast('kv-events-buffer', 1),
  },
  'load-publish': {
    type: 'boolean',
    default: false,
    describe: 'publish SGLang LoadStat over ZMQ (needs --kv-events, as SGLang does)',
  },
  'as-sglang': {
    type: 'boolean',
    default: false,
    describe: 'pose as a real SGLang engine: no "simulated" marker in any JSON, SGLang\'s SHA-256 block hashes in the KV events',
  },
  tokenizer: {
    type: 'string',
    describe:
      "with --as-sglang: the model's tokenizer.json (or its folder, with the chat template) for text and chat prompts; the stand-in tokenizer when unset",
  },
  json: { type: 'boolean', default: false, describe: 'print one JSON object with the URLs' },
} as const satisfies Record<string, Options>;
