import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { DEFAULT_WORKLOAD } from '../../src/workload/index.js';
import { runVirtual } from '../../src/virtual/index.js';

const base = {
  config: { ...defaultConfig(), workerQueueLimit: 4 },
  workers: 3,
  engine: { maxRunning: 8, speedup: 0.5 },
  workload: { ...DEFAULT_WORKLOAD, rate: 6 },
  durationS: 60,
  seed: 11,
};

describe('runVirtual: the router on simulated time', () => {
  it('is deterministic for a seed, and every routed request books one decision', () => {
    const a = runVirtual(base);
    const b = runVirtual(base);
    expect(b.decisions).toEqual(a.decisions);
    expect(b.ttftMs).toEqual(a.ttftMs);
    const booked = Object.values(a.decisions).reduce((x, y) => x + y, 0);
    expect(booked).toBe(a.sent + a.refused);
    expect(a.failures).toBe(0);
    expect(a.sent).toBeGreaterThan(200);
    // Multi-turn sessions on shared system prompts: affinity is found.
    expect(a.decisions.cache_hit).toBeGreaterThan(a.sent / 2);
    expect(a.windows).toHaveLength(6);
  });

  it('another seed gives another run', () => {
    expect(runVirtual({ ...base, seed: 12 }).ttftMs).not.toEqual(runVirtual(base).ttftMs);
  });

  it('the gate acts when an owner queues: a limit of 1 on a loaded fleet diverts', () => {
    const r = runVirtual({ ...base, config: { ...base.config, workerQueueLimit: 1 }, workload: { ...base.workload, rate: 14 } });
    expect(r.decisions.cache_worker_queued + r.decisions.all_queued).toBeGreaterThan(0);
  });
});
