import type { Logger } from '../logging/logger.js';
import { QUEUE_GATE_INERT_MESSAGE, SATURATION_PIN_LOG_MESSAGE } from '../policies/cache-aware/index.js';
import type { PolicyName, QueueGate, SelectionOutcome } from '../policies/index.js';
import type { Worker } from '../upstream/worker.js';
import type { RouterMetrics } from './router-metrics.js';

/**
 * Books one selection's metrics and logs exactly as the policy labelled it; nothing is
 * re-derived here, so the booking invariants (one decision per resolved selection,
 * none per failure) live in the policy and are tested there.
 */
export class SelectionBooker {
  private pinLogCounter = 0;

  constructor(
    private readonly metrics: RouterMetrics,
    private readonly log: Logger,
    private readonly policy: PolicyName,
    private readonly model: () => string,
    private readonly gate: QueueGate,
  ) {}

  book(outcome: SelectionOutcome, poolSize: number): void {
    const m = this.metrics;
    const policy = this.policy;
    const model = this.model();
    const cacheAware = outcome.cacheAware;
    if (cacheAware?.inertWarning) {
      this.log.warn(QUEUE_GATE_INERT_MESSAGE, { model, worker_queue_limit: this.gate.limit, workers: poolSize });
    }
    const audit = cacheAware?.resolution;
    if (audit) {
      m.admissionEvaluated.inc([], audit.admissionEvaluated);
      m.admissionRejected.inc([], audit.admissionRejected);
      m.guardCompared.inc([], audit.pressureGuardComparedPairs);
      m.guardOverrides.inc([], audit.pressureGuardOverrides);
      m.monitorDecisions.inc([audit.prefillPressureSource]);
    }
    for (const w of cacheAware?.gateRejected ?? []) {
      m.gateRejected.inc([model, w.id]);
      (w as Worker).gateRejectionsTotal++;
    }
    if (!outcome.ok) {
      m.selectionFailures.inc([policy, outcome.reason]);
      return;
    }
    m.policyDecisions.inc([policy, outcome.reason]);
    if (cacheAware?.decision) m.cacheDecisions.inc([model, cacheAware.decision]);
    if (cacheAware?.divertedOverlapBlocks !== undefined) m.divertedOverlap.observe([model], cacheAware.divertedOverlapBlocks);
    if (cacheAware?.partialDiversion) m.partialDiversions.inc([model]);
    if (outcome.reason === 'saturation_pin' && this.pinLogCounter++ % 64 === 0) {
      // The floor and limit in force say why the fleet counted as saturated (docs/routing.md, "Saturation-pin log line").
      this.log.info(SATURATION_PIN_LOG_MESSAGE, {
        model,
        worker: outcome.worker.id,
        worker_queue_limit: this.gate.limit,
        saturation_queue_floor: this.gate.floor,
      });
    }
  }
}
