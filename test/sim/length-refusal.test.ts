import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_PARAMS, EngineCore, ManualClock, checkLength, lengthRefusalReason, startSimFleet } from '../../src/sim/index.js';
import type { EngineParams, Flavor, SimFleet } from '../../src/sim/index.js';
import { post } from '../helpers/http.js';

const params = (o: Partial<EngineParams> = {}): EngineParams => ({ ...DEFAULT_ENGINE_PARAMS, ...o });
const prompt = (n: number): number[] => Array.from({ length: n }, (_, i) => 100 + (i % 1000));

describe('refusals for length, in each engine’s words (docs/simulator.md §Refusals for length)', () => {
  it('the context length defaults to the simulated model’s 131,072', () => {
    expect(DEFAULT_ENGINE_PARAMS.maxModelLen).toBe(131_072);
  });

  it('a 126K-token prompt fits the default context and a pool of 32,768 blocks', () => {
    const core = new EngineCore(params({ kvBlocks: 32_768 }), new ManualClock(0), 1);
    const r = core.submit({ promptTokens: prompt(126_195), maxTokens: 343, ignoreEos: true }, { onToken() {}, onFinish() {} });
    expect(r.ok).toBe(true);
    core.close();
  });

  it.each<[Flavor, number, number, string, string]>([
    ['sglang', 100, 1, 'context_length', "The input (100 tokens) is longer than the model's context length (100 tokens)."],
    [
      'sglang',
      90,
      20,
      'context_length',
      "Requested token count exceeds the model's maximum context length of 100 tokens. You requested a total of 110 tokens: " +
        '90 tokens from the input messages and 20 tokens for the completion. Please reduce the number of tokens in the input ' +
        'messages or the completion to fit within the limit.',
    ],
    [
      'vllm',
      100,
      1,
      'context_length',
      "This model's maximum context length is 100 tokens. However, your request has 100 input tokens. Please reduce the length of the input messages.",
    ],
    [
      'vllm',
      90,
      20,
      'context_length',
      "'max_tokens' or 'max_completion_tokens' is too large: 20. This model's maximum context length is 100 tokens and your request has 90 input tokens (20 > 100 - 90).",
    ],
  ])('%s: %i input tokens + %i to generate against a context of 100 → %s', (flavor, input, max, reason, message) => {
    expect(checkLength(flavor, params({ maxModelLen: 100 }), input, max)).toEqual({ reason, message });
    expect(lengthRefusalReason(message)).toBe(reason);
  });

  it.each<[Flavor, string]>([
    [
      'sglang',
      'Input length (150 tokens) exceeds the maximum allowed length (140 tokens). Use a shorter input or enable --allow-auto-truncate.',
    ],
    [
      'vllm',
      'The request needs 170 tokens of KV cache, more than the 160 the cache holds (simulator: vLLM would not start with max_model_len 131072 on this cache).',
    ],
  ])('%s: within the context but beyond the KV pool → kv_capacity', (flavor, message) => {
    // 10 blocks of 16 tokens: 150 + 20 tokens do not fit.
    expect(checkLength(flavor, params({ kvBlocks: 10 }), 150, 20)).toEqual({ reason: 'kv_capacity', message });
    expect(lengthRefusalReason(message)).toBe('kv_capacity');
  });

  it('what fits both passes, and other 400s have no length reason', () => {
    expect(checkLength('sglang', params(), 131_000, 71)).toBeUndefined();
    expect(checkLength('vllm', params(), 131_000, 72)).toBeUndefined();
    expect(lengthRefusalReason("Either 'text' or 'input_ids' must be provided")).toBeUndefined();
  });

  it('the engine core says which reason refused it', () => {
    const core = new EngineCore(params({ maxModelLen: 64, kvBlocks: 2 }), new ManualClock(0), 1);
    const obs = { onToken() {}, onFinish() {} };
    expect(core.submit({ promptTokens: prompt(64), maxTokens: 1, ignoreEos: true }, obs)).toMatchObject({ reason: 'context_length' });
    expect(core.submit({ promptTokens: prompt(40), maxTokens: 1, ignoreEos: true }, obs)).toMatchObject({ reason: 'kv_capacity' });
    core.close();
  });
});

describe('the 400 bodies over HTTP', () => {
  const fleets: Partial<Record<Flavor, SimFleet>> = {};
  beforeAll(async () => {
    for (const flavor of ['sglang', 'vllm'] as const) {
      fleets[flavor] = await startSimFleet({ workers: 1, portBase: 0, flavor, speedup: 100, params: { maxModelLen: 64 } });
    }
  });
  afterAll(async () => {
    for (const f of Object.values(fleets)) await f.close();
  });

  it('SGLang’s native /generate: {"error":{"message"}}', async () => {
    const r = await post(`${fleets.sglang!.urls[0]}/generate`, { input_ids: prompt(70), sampling_params: { max_new_tokens: 1 } });
    expect(r.status).toBe(400);
    expect(r.json()).toEqual({ error: { message: "The input (70 tokens) is longer than the model's context length (64 tokens)." } });
  });

  it('SGLang’s OpenAI routes: the flat shape', async () => {
    const r = await post(`${fleets.sglang!.urls[0]}/v1/completions`, { prompt: prompt(60), max_tokens: 10 });
    expect(r.status).toBe(400);
    expect(r.json()).toEqual({
      object: 'error',
      message: expect.stringMatching(/^Requested token count exceeds the model's maximum context length of 64 tokens/),
      type: 'BadRequestError',
      param: null,
      code: 400,
    });
  });

  it('vLLM: the nested OpenAI shape', async () => {
    const r = await post(`${fleets.vllm!.urls[0]}/v1/completions`, { prompt: prompt(70), max_tokens: 1 });
    expect(r.status).toBe(400);
    expect(r.json()).toEqual({
      error: {
        message:
          "This model's maximum context length is 64 tokens. However, your request has 70 input tokens. Please reduce the length of the input messages.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    });
  });
});
