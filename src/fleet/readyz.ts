import { getText } from './http.js';
import type { GetOptions } from './http.js';

/**
 * Whether a router read through its /metrics takes new requests, from its /readyz
 * (docs/metrics-and-admin.md §Replica states): false when it answers 503 and says it
 * drains (routerctl answers `{"status":"draining"}`), true on 200, null otherwise. A 503
 * for another cause (routerctl's `no_healthy_workers`) is not draining: the router still
 * takes requests, and the worker table shows why it cannot place them. A router with no
 * /readyz (the Rust sgl-router) or a failed read says nothing: /metrics has answered,
 * which is what makes the replica up.
 */
export async function readyFromReadyz(base: string, opts: GetOptions): Promise<boolean | null> {
  try {
    const res = await getText(`${base}/readyz`, opts);
    if (res.status === 200) return true;
    if (res.status === 503 && /drain/i.test(res.text)) return false;
    return null;
  } catch {
    return null;
  }
}
