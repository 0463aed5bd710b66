import { describe, expect, it } from 'vitest';
import { getJson, rawRequest } from '../helpers/http.js';
import { runCli, startCli } from '../helpers/cli.js';
import { parsePrometheusText } from '../../src/prometheus/index.js';

/** The scheduler flags of `routerctl sim` (built binary), named as the engines name them (docs/simulator.md §Parameters). */
async function withSim(args: string[], fn: (url: string) => Promise<void>): Promise<void> {
  const sim = startCli(['sim', '-n', '1', '--port-base', '0', '--json', ...args]);
  try {
    const [line] = await sim.waitFor(/^\{.*\}\n/m);
    await fn((JSON.parse(line) as { urls: string[] }).urls[0]!);
    sim.child.kill('SIGTERM');
    expect((await sim.exited(5000)).code).toBe(0);
  } finally {
    sim.child.kill('SIGKILL');
  }
}

describe('routerctl sim scheduler flags', () => {
  it('SGLang flags reach /server_info and /v1/loads', async () => {
    await withSim(
      [
        '--schedule-policy',
        'lpm',
        '--max-total-tokens',
        '4010',
        '--max-prefill-tokens',
        '4096',
        '--chunked-prefill-size',
        '2048',
        '--max-running',
        '6',
      ],
      async (url) => {
        expect(await getJson(`${url}/server_info`)).toMatchObject({
          schedule_policy: 'lpm',
          max_prefill_tokens: 4096,
          chunked_prefill_size: 2048,
          max_running_requests: 6,
          max_total_tokens: 4010,
          max_total_num_tokens: 4000,
        });
        const loads = (await getJson(`${url}/v1/loads`)) as { loads: Array<Record<string, number>> };
        expect(loads.loads[0]).toMatchObject({ max_total_num_tokens: 4000, max_running_requests: 6 });
      },
    );
  });

  it('defaults: fcfs, 16384 and 8192, no max_total_tokens', async () => {
    await withSim([], async (url) => {
      expect(await getJson(`${url}/get_server_info`)).toMatchObject({
        schedule_policy: 'fcfs',
        max_prefill_tokens: 16384,
        chunked_prefill_size: 8192,
        max_total_tokens: null,
        max_total_num_tokens: 8192 * 16,
      });
    });
  });

  it('vLLM flags are accepted with --flavor vllm, and --kv-blocks shows in cache_config_info', async () => {
    await withSim(
      ['--flavor', 'vllm', '--max-num-batched-tokens', '2048', '--long-prefill-token-threshold', '512', '--kv-blocks', '300'],
      async (url) => {
        const m = parsePrometheusText((await rawRequest(`${url}/metrics`)).text);
        expect(m.get('vllm:cache_config_info')!.samples[0]!.labels).toMatchObject({ num_gpu_blocks: '300', block_size: '16' });
      },
    );
  });

  it.each([
    [['--flavor', 'vllm', '--max-prefill-tokens', '100'], /--max-prefill-tokens is a sglang flag/],
    [['--max-num-batched-tokens', '4096'], /--max-num-batched-tokens is a vllm flag/],
    [['--flavor', 'vllm', '--schedule-policy', 'lpm'], /--schedule-policy lpm is an sglang policy/],
    [['--kv-blocks', '64', '--max-total-tokens', '1024'], /both size the KV cache/],
    [['--chunked-prefill-size', '8'], /--chunked-prefill-size must be at least --block-size 16/],
  ])('rejects %j with exit 2', async (args, message) => {
    const r = await runCli(['sim', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
