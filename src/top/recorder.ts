import { closeSync, openSync, writeSync } from 'node:fs';
import { ErrorCodes, UsageError } from '../errors/index.js';
import type { ReplicaStatus } from '../fleet/index.js';

/**
 * `top --record FILE`: every update of every router as it arrives, one JSON object per
 * line, appended: `{"at": epoch ms, "replica": url, "source", "live", "error",
 * "snapshot"}`. The snapshots are what the console merges, unprocessed, so a recording
 * holds everything the console showed and can be replayed or read by scripts after an
 * incident (docs/metrics-and-admin.md §Recording).
 */
export class Recorder {
  readonly #fd: number;
  lines = 0;

  constructor(readonly path: string) {
    try {
      this.#fd = openSync(path, 'a');
    } catch (err) {
      throw new UsageError(
        ErrorCodes.USAGE,
        `cannot write the --record file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  }

  write(status: ReplicaStatus): void {
    const line = JSON.stringify({
      at: status.receivedAt ?? Date.now(),
      replica: status.url,
      source: status.source,
      live: status.live,
      error: status.error,
      snapshot: status.snapshot,
    });
    writeSync(this.#fd, `${line}\n`);
    this.lines++;
  }

  close(): void {
    closeSync(this.#fd);
  }
}
