import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { parseMooncakeTrace } from '../../src/workload/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { eventually, post, rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

let fleet: SimFleet | undefined;
let router: Router | undefined;
let dir: string | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  router = fleet = dir = undefined;
});

const model = 'sim-llama-3.1-8b';
// About 1,500 tokens at four characters each: two whole 512-token blocks and a part.
const SYSTEM = Array.from({ length: 300 }, (_, i) => `zebrafish rule ${i}: answer briefly.`).join(' ');

describe('routerctl bench --capture', () => {
  it('writes what the router served as a Mooncake trace: arrivals, sizes, shared prefixes as shared ids, no text; the file replays', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 50 });
    // round_robin keys no prefix for itself: a capture still gets the keys.
    router = await startTestRouter(fleet.urls, { policy: 'round_robin' });
    dir = await mkdtemp(path.join(tmpdir(), 'routerctl-capture-'));
    const file = path.join(dir, 'captured.jsonl');
    const cli = startCli(['bench', 'capture', file, '--url', router.url, '--duration', '4s']);
    await eventually(() => router!.capture.active);
    for (let i = 0; i < 4; i++) {
      const res = await post(`${router.url}/v1/chat/completions`, {
        model,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: `question ${i}` },
        ],
        max_tokens: 3 + i,
      });
      expect(res.status).toBe(200);
    }
    const other = await post(`${router.url}/v1/chat/completions`, {
      model,
      messages: [{ role: 'user', content: 'short and unrelated' }],
      max_tokens: 2,
    });
    expect(other.status).toBe(200);
    const { code } = await cli.exited(15_000);
    expect(cli.stderr()).toBe('');
    expect(code).toBe(0);
    expect(cli.stdout()).toMatch(
      /^captured 5 requests to .*captured\.jsonl \(digest [0-9a-f]{16}, blocks of 512 tokens\)\nreplay: routerctl bench compare --trace /,
    );
    expect(router.capture.active).toBe(false);

    const text = await readFile(file, 'utf8');
    expect(text).not.toMatch(/zebrafish|question|unrelated/);
    const { requests, problems } = parseMooncakeTrace(text, 512);
    expect(problems).toEqual([]);
    expect(requests).toHaveLength(5);
    const shared = requests.slice(0, 4);
    for (const r of shared) {
      expect(r.hashIds.length).toBeGreaterThanOrEqual(3);
      expect(r.hashIds.slice(0, 2)).toEqual(shared[0]!.hashIds.slice(0, 2));
    }
    // What the engine generated, from its usage.
    expect(shared.map((r) => r.outputLength)).toEqual([3, 4, 5, 6]);
    expect(requests[4]!.hashIds).toHaveLength(1);
    expect(shared[0]!.hashIds).not.toContain(requests[4]!.hashIds[0]);
    // Arrivals in order, from the capture's start.
    expect(requests.map((r) => r.atMs)).toEqual([...requests.map((r) => r.atMs)].sort((a, b) => a - b));

    const replay = await runCli(['bench', 'run', '--trace', file, '--clock', 'virtual', '--json']);
    expect(replay.code).toBe(0);
    expect((JSON.parse(replay.stdout) as { runs: Array<{ finished: number }> }).runs[0]!.finished).toBe(5);
  }, 30_000);

  it("GET /admin/capture refuses a block size that is not a multiple of the router's, and is guarded by the admin token", async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50 });
    router = await startTestRouter(fleet.urls, { adminToken: 'sekret' });
    const bad = await rawRequest(`${router.url}/admin/capture?block_tokens=100`, { headers: { authorization: 'Bearer sekret' } });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/block_tokens must be a whole multiple of the router's --block-size \(16\)/);
    const denied = await runCli(['bench', 'capture', path.join(tmpdir(), 'never.jsonl'), '--url', router.url, '--duration', '1s']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/requires an admin token \(401\); pass it with --token or ROUTERCTL_ADMIN_TOKEN/);
  }, 30_000);

  it('a router that stops mid-capture leaves a file with what came before, and a warning', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50 });
    router = await startTestRouter(fleet.urls);
    dir = await mkdtemp(path.join(tmpdir(), 'routerctl-capture-'));
    const file = path.join(dir, 'cut.jsonl');
    const cli = startCli(['bench', 'capture', file, '--url', router.url, '--duration', '60s']);
    await eventually(() => router!.capture.active);
    for (let i = 0; i < 2; i++)
      expect(
        (await post(`${router.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: `q ${i}` }], max_tokens: 2 })).status,
      ).toBe(200);
    await router.close();
    router = undefined;
    const { code } = await cli.exited(15_000);
    expect(code).toBe(0);
    expect(cli.stderr()).toMatch(
      /^warning: the router ended the capture after \d+ s \(it stopped or restarted\); the file has what came before\n$/,
    );
    expect(cli.stdout()).toMatch(/^captured 2 requests to /);
    expect(parseMooncakeTrace(await readFile(file, 'utf8'), 512).requests).toHaveLength(2);
  }, 30_000);
});
