import type { AdminDecisions } from '../contract/index.js';
import { ErrorCodes, RouterctlError } from '../errors/index.js';
import { createAgent, getText, normalizeRouterUrl, unauthorized } from '../fleet/index.js';
import { StopSignals } from '../cli/index.js';
import { decisionLine, decisionStory } from './story.js';

export interface ExplainOptions {
  url: string;
  token: string | undefined;
  /** Explain one request by id; otherwise tail the decisions. */
  request: string | undefined;
  json: boolean;
  /** Print the recent decisions and exit instead of following. */
  once: boolean;
  /** Recent decisions printed first (and all of them with --once). */
  limit: number;
  intervalMs: number;
  out?: NodeJS.WritableStream;
}

/**
 * `routerctl explain` (docs/decisions.md §routerctl explain): one request's decision as
 * a story, or the router's decisions one line each as they happen. Reads
 * GET /admin/decisions; every failure is one coded line.
 */
export async function runExplain(o: ExplainOptions): Promise<void> {
  const base = normalizeRouterUrl(o.url);
  const out = o.out ?? process.stdout;
  const agent = createAgent();
  const fetchDoc = async (query: string): Promise<AdminDecisions> => {
    const r = await getText(`${base}/admin/decisions?${query}`, { dispatcher: agent, token: o.token });
    if (r.status === 401) throw unauthorized(base, o.token !== undefined);
    if (r.status === 404)
      throw new RouterctlError(
        ErrorCodes.NOT_A_ROUTER,
        `the router at ${base} has no /admin/decisions: explain needs routerctl serve (with --decision-log-size above 0)`,
      );
    if (r.status !== 200)
      throw new RouterctlError(ErrorCodes.NOT_A_ROUTER, `the router at ${base} answered /admin/decisions with ${r.status}`);
    try {
      return JSON.parse(r.text) as AdminDecisions;
    } catch {
      throw new RouterctlError(ErrorCodes.NOT_A_ROUTER, `the router at ${base} answered /admin/decisions with something that is not JSON`);
    }
  };
  try {
    if (o.request !== undefined) {
      const doc = await fetchDoc(`request_id=${encodeURIComponent(o.request)}`);
      const d = doc.decisions.at(-1);
      if (!d) {
        throw new RouterctlError(
          ErrorCodes.NO_DECISION,
          doc.capacity === 0
            ? `the router at ${base} keeps no decisions (--decision-log-size 0); start it with a ring to explain requests`
            : `no decision for request ${o.request} among the router's last ${Math.min(doc.capacity, doc.recorded_total)}; ids come from the x-request-id response header`,
        );
      }
      out.write(
        o.json
          ? `${JSON.stringify(d)}\n`
          : `${decisionStory(d, {
              workerQueueLimit: doc.worker_queue_limit,
              blockSize: doc.block_size,
              gateMode: doc.queue_gate_mode,
              ttftSloMs: doc.ttft_slo_ms,
            }).join('\n')}\n`,
      );
      return;
    }
    const first = await fetchDoc(`limit=${o.limit}`);
    const print = (doc: AdminDecisions): number => {
      for (const d of doc.decisions) out.write(o.json ? `${JSON.stringify(d)}\n` : `${decisionLine(d)}\n`);
      return doc.decisions.at(-1)?.seq ?? 0;
    };
    let since = print(first);
    if (o.once) return;
    const stops = new StopSignals().listen();
    let stopped = false;
    void stops.first.then(() => (stopped = true));
    while (!stopped) {
      await Promise.race([new Promise((r) => setTimeout(r, o.intervalMs)), stops.first]);
      if (stopped) break;
      const doc = await fetchDoc(`since=${since}&limit=1000`);
      since = Math.max(since, print(doc));
    }
  } finally {
    await agent.close().catch(() => undefined);
  }
}
