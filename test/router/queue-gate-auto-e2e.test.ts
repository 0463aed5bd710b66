import { afterEach, describe, expect, it } from 'vitest';
import type { AdminDecision } from '../../src/contract/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';
import { getJson } from '../helpers/http.js';
import { pinWaiting } from '../helpers/pin-load.js';
import { sendChatWithId, startTestRouter } from '../helpers/router.js';

/**
 * `--queue-gate auto` end to end (docs/routing.md §Gate modes): real simulated engines
 * with their waiting counts pinned, the real router sampling them, each request sent
 * with its own x-request-id. The auto limit is the larger of 6 and twice the pool's
 * mean waiting count, so one owner queueing beyond the rest is left, and a fleet
 * queueing evenly keeps its affinity. The built `routerctl explain` says which rule
 * turned the owner away.
 */
const model = 'sim-llama-3.1-8b';
// ~1,500 estimated tokens: clears the default 1,024-token affinity minimum.
const PROMPT = 'Shared operations runbook. '.repeat(230);

let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = fleet = undefined;
});

async function send(r: Router, id: string): Promise<string> {
  await sendChatWithId(r, id, PROMPT, model);
  return record(r, id).worker;
}

const pin = pinWaiting;

const record = (r: Router, id: string): AdminDecision => r.decisionsDoc({ requestId: id }).decisions.at(-1)!;

interface GateFields {
  queue_gate_mode: string;
  queue_gate_limit: number | null;
  worker_queue_limit: number | null;
  queue_gate_rule: string | null;
}
const gateFields = async (r: Router): Promise<GateFields> => ((await getJson(`${r.url}/admin/state`)) as { router: GateFields }).router;

describe('--queue-gate auto over real HTTP', () => {
  it('diverts off an owner queueing beyond the pool, keeps affinity when the whole fleet queues evenly, and explain names the rule', async () => {
    fleet = await startSimFleet({ workers: 3, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls, { queueGate: 'auto' }));
    const [a, b, c] = fleet.urls as [string, string, string];
    await pin(r, { [a]: 0, [b]: 0, [c]: 0 });
    const owner = await send(r, 'first');
    const others = fleet.urls.filter((u) => u !== owner);
    expect(await gateFields(r)).toMatchObject({ queue_gate_mode: 'auto', queue_gate_limit: 6, worker_queue_limit: null });

    // The owner holds 7, the others 0 and 1: mean 2.7, limit max(6, 6) = 6, so the owner is queued and the others are not.
    await pin(r, { [owner]: 7, [others[0]!]: 0, [others[1]!]: 1 });
    expect(await gateFields(r)).toMatchObject({ queue_gate_limit: 6 });
    expect(r.state().workers.find((w) => w.url === owner)!.gated).toBe(true);
    const diverted = await send(r, 'diverted');
    expect(others).toContain(diverted);
    const d = record(r, 'diverted');
    expect(d.decision).toBe('cache_worker_queued');
    expect(d.gate_rule).toBe("waiting ≥ 6 (auto: the larger of 6 and 2 × the pool's mean waiting, 2.7)");

    const story = await runCli(['explain', '--url', r.url, '--request', 'diverted']);
    expect(story.code).toBe(0);
    expect(story.stdout).toContain(
      `waiting 7: gated (auto gate: waiting ≥ 6 (auto: the larger of 6 and 2 × the pool's mean waiting, 2.7))`,
    );
    expect(story.stdout).toContain('every owner of the prefix was at or over the queue rule in force (auto: waiting ≥ 6');

    // Every engine queues 6: the limit rises to 12, nobody is queued, and the request stays with the owner that holds its prefix.
    const holders = [owner, diverted];
    await pin(r, { [a]: 6, [b]: 6, [c]: 6 });
    expect(await gateFields(r)).toMatchObject({ queue_gate_limit: 12 });
    expect(r.state().alerts.all_queued).toBe(false);
    const kept = await send(r, 'saturated');
    expect(holders).toContain(kept);
    expect(record(r, 'saturated').decision).toBe('cache_hit');
    expect(record(r, 'saturated').candidates.every((x) => x.gate === 'admitted')).toBe(true);
  });

  it('both admin documents write --worker-queue-limit as given, the one value, whatever the mode', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls, { queueGate: 'auto', workerQueueLimit: 8 }));
    const decisions = (await getJson(`${r.url}/admin/decisions`)) as { worker_queue_limit: number | null; queue_gate_mode: string };
    expect(await gateFields(r)).toMatchObject({ queue_gate_mode: 'auto', worker_queue_limit: 8, queue_gate_limit: 8 });
    expect(decisions).toMatchObject({ queue_gate_mode: 'auto', worker_queue_limit: 8 });
  });

  it('leaves the fixed gate exactly as the reference has it: no limit, no gate', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 50 });
    const r = (router = await startTestRouter(fleet.urls));
    expect(await gateFields(r)).toMatchObject({
      queue_gate_mode: 'fixed',
      queue_gate_limit: null,
      worker_queue_limit: null,
      queue_gate_rule: null,
    });
  });
});
