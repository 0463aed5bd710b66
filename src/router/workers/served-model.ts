import type { Logger } from '../logging/logger.js';
import { UNKNOWN_MODEL } from '../metrics/index.js';
import type { Worker } from '../upstream/worker.js';
import { discoverModel } from './discover-model.js';

/**
 * The model this router serves: `--model-id`, or learnt from the workers' /v1/models
 * (docs/routing.md §Data path, model check). One value, held by every reader as the
 * queue gate is, so none keeps a fallback of its own.
 */
export class ServedModel {
  #id: string | null;

  constructor(
    id: string | null,
    /** Told once, when the model becomes known (the metrics relabel their series). */
    private readonly learnt: (id: string) => void,
  ) {
    this.#id = id;
  }

  /** The model's id; null until known, when any model name is accepted. */
  get id(): string | null {
    return this.#id;
  }

  /** Its label in metrics and records: the id, or `unknown` until it is known. */
  get label(): string {
    return this.#id ?? UNKNOWN_MODEL;
  }

  /** Learn it from what the workers list, unless it is known already. */
  learn(workers: readonly Worker[], log: Logger): void {
    if (this.#id !== null) return;
    this.#id = discoverModel(workers, log);
    if (this.#id !== null) this.learnt(this.#id);
  }
}
