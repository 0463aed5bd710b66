/**
 * What recording a decision costs a request (docs/decisions.md §Decision record): the
 * selected and best owner's summary, the ring's record with four prefix owners and
 * their gate verdicts, the cached-tokens
 * scan of a 600-byte response, and the completion. Measured in this one process,
 * nothing else running: the figure is the recording's own CPU per request, to read
 * against the 100–170 µs of CPU a short request costs the router (BENCHMARKS.md,
 * section 2).
 *
 *   npm run perf -- decisions
 */
import { UsageCountScanner, DecisionRing, ownerSummary } from '../src/router/index.js';
import { writeResult } from './support/results.js';

const ring = new DecisionRing(4096);
const owners = ['http://10.0.0.1:30000', 'http://10.0.0.2:30000', 'http://10.0.0.3:30000', 'http://10.0.0.4:30000'].map((id, i) => ({
  worker: { id },
  blocks: 40 - i * 7,
}));
const verdict = (w: { id: string }) =>
  w.id.endsWith('1:30000')
    ? { waiting: 7, verdict: 'gated' as const, predictedMs: -1 }
    : { waiting: 2, verdict: 'admitted' as const, predictedMs: -1 };
const response = Buffer.from(
  `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"${'x'.repeat(300)}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1562,"completion_tokens":2,"total_tokens":1564,"prompt_tokens_details":{"cached_tokens":1552}}}`,
);

function one(i: number): void {
  const seq = ring.record(
    {
      id: `r1a2b3c-${i}`,
      atMs: 1,
      policy: 'cache_aware',
      decision: 'cache_worker_queued',
      reason: 'no_cache_candidate',
      inputTokens: 1562,
      queryBlocks: 97,
      selected: owners[1]!.worker.id,
      ...ownerSummary(owners, owners[1]!.worker.id),
      gateRejected: 1,
      admissionRejected: 0,
      gateRule: 'waiting ≥ 6',
      predictedTtftMs: -1,
      fleetAllQueued: false,
      divertedBlocks: 40,
      partialDiversion: false,
    },
    owners,
    verdict,
  );
  const s = new UsageCountScanner();
  s.push(response);
  ring.complete(seq, 200, s.value, 3, 4);
}

for (let i = 0; i < 200_000; i++) one(i);
const n = 1_000_000;
const t0 = performance.now();
for (let i = 0; i < n; i++) one(i);
const us = ((performance.now() - t0) * 1000) / n;
console.log(`node ${process.version}; ${n.toLocaleString('en')} requests into a ring of ${ring.capacity}`);
console.log(`record + cached-tokens scan + completion: ${us.toFixed(2)} µs per request`);
writeResult('decisions', {
  figures: { requests: n, ring_capacity: ring.capacity, record_us_per_request: Number(us.toFixed(2)) },
  bottleneck: "this process's one core; no client or upstream",
});
