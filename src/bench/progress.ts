import { paint } from '../cli/index.js';
import type { DriverCounts } from '../workload/index.js';
import { formatDuration } from './duration.js';

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(s: string): boolean;
}

/**
 * One self-rewriting status line while a run is going, on a terminal only: piped
 * stderr (CI logs, `2>file`) gets nothing, so logs hold no carriage-return noise.
 */
export class ProgressLine {
  private timer: NodeJS.Timeout | undefined;
  private drawn = false;

  constructor(
    private readonly stream: ProgressStream,
    private readonly color: boolean,
  ) {}

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  /** Redraw a few times a second from `read` until stop(). */
  start(label: string, totalMs: number, startedAt: () => number, read: () => DriverCounts): void {
    if (!this.enabled) return;
    const draw = (): void => {
      const t0 = startedAt();
      const elapsed = t0 > 0 ? performance.now() - t0 : 0;
      // Some pseudo-terminals report 0 columns: treat that as unknown.
      this.draw(renderProgress(label, elapsed, totalMs, read(), this.stream.columns || 80, this.color));
    };
    draw();
    this.timer = setInterval(draw, 250);
    this.timer.unref();
  }

  /** Show a one-off status (e.g. "starting fleet…") in place of the bar. */
  status(text: string): void {
    if (this.enabled) this.draw(text);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.drawn) this.stream.write('\r\u001b[2K');
    this.drawn = false;
  }

  private draw(line: string): void {
    this.stream.write(`\r\u001b[2K${line}`);
    this.drawn = true;
  }
}

/** The status line: label, bar, elapsed/total, and live request counts, cut to the terminal width. */
export function renderProgress(
  label: string,
  elapsedMs: number,
  totalMs: number,
  c: DriverCounts,
  columns: number,
  color: boolean,
): string {
  const frac = totalMs > 0 ? Math.min(1, elapsedMs / totalMs) : 1;
  const width = 20;
  const filled = Math.round(frac * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const clock =
    elapsedMs > totalMs ? `${formatDuration(totalMs)} done, finishing` : `${formatDuration(elapsedMs)}/${formatDuration(totalMs)}`;
  const failed = c.failed > 0 ? paint(`err ${c.failed}`, 'red', color) : `err ${c.failed}`;
  const plain = `${label} ${bar} ${clock}  sent ${c.sent} ok ${c.ok} err ${c.failed} in-flight ${c.inflight}`;
  if (plain.length > columns - 1) return plain.slice(0, Math.max(0, columns - 1));
  return `${label} ${bar} ${clock}  sent ${c.sent} ok ${c.ok} ${failed} in-flight ${c.inflight}`;
}
