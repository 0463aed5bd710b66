import type { Selector } from '../../config/index.js';
import type { KubeObject } from './kube-api.js';

/** The API group, version and plural of the Gateway API Inference Extension's pool. */
export const INFERENCE_POOL_API = 'inference.networking.k8s.io/v1';

/** What an InferencePool says about its engines: the pods' labels and their port; or why it says nothing usable. */
export type PoolSpec =
  { readonly ok: true; readonly selector: Selector; readonly port: number } | { readonly ok: false; readonly reason: string };

/**
 * An `inference.networking.k8s.io/v1` InferencePool's `spec.selector.matchLabels` and
 * `spec.targetPorts[0].number` (docs/http-edge.md §Kubernetes discovery). v1 allows one
 * target port; later releases of the reference EPP make one endpoint per port, and this
 * takes the first. An empty `matchLabels` selects every pod in the namespace, as the
 * reference EPP's `labels.SelectorFromSet` does. A pool being deleted stands for nothing.
 */
export function readPool(o: KubeObject): PoolSpec {
  const meta = (o.metadata ?? {}) as { deletionTimestamp?: unknown };
  if (meta.deletionTimestamp != null) return { ok: false, reason: 'it is being deleted' };
  const spec = (o.spec ?? {}) as { selector?: { matchLabels?: unknown }; targetPorts?: unknown };
  const labels = spec.selector?.matchLabels ?? {};
  if (
    typeof labels !== 'object' ||
    labels === null ||
    Array.isArray(labels) ||
    !Object.values(labels).every((v) => typeof v === 'string')
  ) {
    return { ok: false, reason: 'its spec.selector.matchLabels is not a map of label values' };
  }
  const first: unknown = Array.isArray(spec.targetPorts) ? spec.targetPorts[0] : undefined;
  const port = (first as { number?: unknown } | undefined)?.number;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    return { ok: false, reason: 'its spec.targetPorts[0].number is not a port' };
  }
  const selector = Object.entries(labels as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { ok: true, selector, port };
}

/** Two readings the pods' watch is the same for. */
export function samePool(a: PoolSpec | undefined, b: PoolSpec | undefined): boolean {
  if (!a?.ok || !b?.ok) return false;
  return a.port === b.port && JSON.stringify(a.selector) === JSON.stringify(b.selector);
}

/** A `fieldSelector` value, escaped as the API server reads one (apimachinery's fields.EscapeValue). */
export function fieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}
