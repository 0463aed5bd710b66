import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../src/prometheus/index.js';
import { RouterMetrics, WorkerBookings } from '../../src/router/metrics/index.js';

const A = 'http://127.0.0.1:30001';
const B = 'http://127.0.0.1:30002';

function metrics(): RouterMetrics {
  return new RouterMetrics({
    modelId: 'm',
    cacheAware: true,
    workers: () => [],
    queueGateInert: () => false,
    prefixIndexBlocks: () => 0,
    prefixIndexEvictions: () => 0,
  });
}

/** sgl_router_worker_requests_total and sgl_router_stream_outcome_total as /metrics writes them. */
function exported(m: RouterMetrics): { requests: string[]; streams: string[] } {
  const families = parsePrometheusText(m.render());
  const rows = (name: string, keys: string[]) =>
    (families.get(name)?.samples ?? []).map((s) => `${keys.map((k) => s.labels[k]).join(' ')} ${s.value}`).sort();
  return {
    requests: rows('sgl_router_worker_requests_total', ['worker_url', 'model_id', 'outcome']),
    streams: rows('sgl_router_stream_outcome_total', ['worker_url', 'model_id', 'outcome']),
  };
}

describe('a worker books into its own series, found once (docs/metrics-and-admin.md)', () => {
  it('books each outcome into the series /metrics writes, beside the same booking by labels', () => {
    const m = metrics();
    const a = new WorkerBookings(m, A);
    a.request('m', 'success');
    a.request('m', 'success');
    a.request('m', 'error');
    a.stream('m', 'ok');
    m.workerRequests.inc([A, 'm', 'plain', 'success']);
    expect(exported(m)).toEqual({ requests: [`${A} m error 1`, `${A} m success 3`], streams: [`${A} m ok 1`] });
  });

  it('a new model label books new series; the old keep their counts', () => {
    const m = metrics();
    const a = new WorkerBookings(m, A);
    a.request('m', 'success');
    a.request('other', 'success');
    a.request('other', 'success');
    expect(exported(m).requests).toEqual([`${A} m success 1`, `${A} other success 2`]);
  });

  it("another worker leaving does not detach a worker's series", () => {
    const m = metrics();
    const a = new WorkerBookings(m, A);
    const b = new WorkerBookings(m, B);
    a.request('m', 'success');
    b.request('m', 'success');
    m.forgetWorker(B);
    a.request('m', 'success');
    a.duration(0.2);
    expect(exported(m).requests).toEqual([`${A} m success 2`]);
    expect(m.workerDuration.count([A])).toBe(1);
  });

  it('a worker that left and books again (its last request ending) starts from its new series, as a booking by labels would', () => {
    const m = metrics();
    const a = new WorkerBookings(m, A);
    a.request('m', 'success');
    a.duration(0.1);
    m.forgetWorker(A);
    expect(exported(m).requests).toEqual([]);
    a.request('m', 'cancelled');
    a.duration(0.3);
    expect(exported(m).requests).toEqual([`${A} m cancelled 1`]);
    expect(m.workerDuration.snapshot([A])).toMatchObject({ count: 1, sum: 0.3 });
  });
});
