import { describe, expect, it } from 'vitest';
import { getJson } from '../helpers/http.js';
import { runCli, startCli } from '../helpers/cli.js';

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

  it('vLLM with --kv-events prints the --kv-events mapping to give the router, and check-config --probe takes it', async () => {
    const sim = startCli(['sim', '-n', '2', '--port-base', '0', '--flavor', 'vllm', '--kv-events', '--json']);
    try {
      const [line] = await sim.waitFor(/^\{.*\}\n/m);
      const info = JSON.parse(line) as { urls: string[]; kv_events_config: Record<string, { endpoint: string; 'replay-endpoint': string; 'dp-size': number }> };
      expect(Object.keys(info.kv_events_config)).toEqual(info.urls);
      for (const e of Object.values(info.kv_events_config)) {
        expect(e.endpoint).toMatch(/^tcp:\/\/\*:\d+$/);
        expect(e['dp-size']).toBe(1);
      }
      const probe = await runCli(['check-config', '--worker-urls', ...info.urls, '--kv-events', JSON.stringify(info.kv_events_config), '--probe']);
      expect(probe.code).toBe(0);
      expect(probe.stdout).toMatch(/vllm .*kv events \(--kv-events\) \(block 16\)/);
      sim.child.kill('SIGINT');
      expect((await sim.exited()).code).toBe(0);
    } finally {
      sim.child.kill('SIGKILL');
    }
  });

  it.each([
    [['sim', '--kv-events-port', '5557'], /--kv-events-port places the KV event sockets; it needs --kv-events/],
    [['sim', '--workers', '0'], /--workers must be a whole number of at least 1/],
    [['sim', '--flavor', 'tgi'], /^error RCTL_E_USAGE: invalid value 'tgi' for --flavor: expected one of sglang, vllm\n/],
    [['sim', '--flavor', 'vlm'], /^error RCTL_E_USAGE: invalid value 'vlm' for --flavor: expected one of sglang, vllm \(did you mean vllm\?\)\n/],
    [['top', '--sort', 'wating'], /^error RCTL_E_USAGE: invalid value 'wating' for --sort: expected one of waiting, rejections, running, inflight, age, url \(did you mean waiting\?\)\n/],
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
    expect(r.stderr.trimEnd().split('\n').filter((l) => !l.startsWith('run routerctl'))).toHaveLength(1);
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
