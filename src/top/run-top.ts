import { StopSignals, colorEnabled } from '../cli/index.js';
import { FleetFeed, ReplayFeed, fetchFleetOnce, readRecording } from '../fleet/index.js';
import type { FleetFeedOptions } from '../fleet/index.js';
import { formatOnce } from './format-once.js';
import { normalizeRouterUrl } from '../fleet/index.js';
import type { SortKey } from '../fleet/index.js';
import { fleetJson } from './to-json.js';
import { Recorder } from './recorder.js';
import { onceExitStatus } from './exit-status.js';
import type { SourceChoice } from '../fleet/index.js';

export interface TopOptions {
  urls: string[];
  intervalMs: number;
  token?: string | undefined;
  source: SourceChoice;
  once: boolean;
  json: boolean;
  sort: SortKey;
  reverse: boolean;
  filter: string;
  blockSize: number;
  /** Append every router update to this file (NDJSON). */
  record?: string | undefined;
  /** With `json`: one JSON line per update until stopped, instead of one document. */
  watch?: boolean;
  /** Play a `--record` file back instead of reading routers. */
  replay?: string | undefined;
}

/**
 * `routerctl top`: one JSON document (`--json`), one plain table (`--once`, or when
 * stdout or stdin is not a terminal: no animation into a pipe), or the live console.
 * Every mode reads every replica once first, so an unreachable router or a wrong
 * token is one line on stderr and a non-zero exit, never a screen of "connecting";
 * with several replicas, one that does not answer is shown down instead, as long as
 * another answers. Resolves to the exit status (exit-status.ts).
 */
export async function runTop(o: TopOptions): Promise<number> {
  if (o.replay !== undefined) return runReplay(o, o.replay);
  const urls = [...new Set(o.urls.map(normalizeRouterUrl))];
  const feedOptions: FleetFeedOptions = { urls, source: o.source, token: o.token, intervalMs: o.intervalMs };
  const interactive = process.stdout.isTTY === true && process.stdin.isTTY === true;

  const recorder = o.record !== undefined ? new Recorder(o.record) : undefined;
  if (recorder) feedOptions.onReplicaUpdate = (status) => recorder.write(status);
  try {
    return await runMode(o, urls, feedOptions, interactive);
  } finally {
    recorder?.close();
  }
}

async function runMode(o: TopOptions, urls: string[], feedOptions: FleetFeedOptions, interactive: boolean): Promise<number> {
  if (o.json && o.watch) {
    // NDJSON: one merged state per update, until a signal; for scripts and log shippers.
    const feed = await FleetFeed.connect(feedOptions);
    const print = (): void => {
      const view = feed.get();
      if (view) process.stdout.write(`${JSON.stringify(fleetJson(view, { sort: o.sort, filter: o.filter, reverse: o.reverse }))}\n`);
    };
    print();
    const unsubscribe = feed.subscribe(print);
    const stops = new StopSignals().listen(['SIGTERM', 'SIGHUP', 'SIGINT']);
    try {
      await stops.first;
    } finally {
      unsubscribe();
      stops.dispose();
      await feed.close();
    }
    return 0;
  }
  if (o.json) {
    // The document says each replica's state; printing it is a success.
    const { view } = await fetchFleetOnce(feedOptions);
    process.stdout.write(`${JSON.stringify(fleetJson(view, { sort: o.sort, filter: o.filter, reverse: o.reverse }), null, 2)}\n`);
    return 0;
  }
  if (o.once || !interactive) {
    const { view } = await fetchFleetOnce(feedOptions);
    process.stdout.write(
      formatOnce(view, { color: colorEnabled(process.stdout), sort: o.sort, reverse: o.reverse, filter: o.filter, blockSize: o.blockSize }),
    );
    return onceExitStatus(view);
  }

  // Ink costs a few hundred ms to import: only the live console pays it, and while
  // the first snapshots are on their way.
  const tuiLoading = import('../tui/index.js');
  tuiLoading.catch(() => undefined); // awaited below; a failed connect must not leave it unhandled
  const feed = await FleetFeed.connect(feedOptions);
  const { runConsole } = await tuiLoading;
  const screen = runConsole({
    feed,
    color: colorEnabled(process.stdout),
    title: 'routerctl top',
    target: urls.join(', '),
    intervalMs: o.intervalMs,
    blockSize: o.blockSize,
    sort: o.sort,
    reverse: o.reverse,
    filter: o.filter,
  });
  await untilStopped(screen, () => feed.close());
  return 0;
}

/**
 * Keep a console up until it quits or a signal comes. Nothing to drain: any stop closes
 * the console (a repeat is a no-op). Once the terminal is restored the handlers go, so a
 * signal while the feed closes ends the process.
 */
async function untilStopped(screen: { close(): void; done: Promise<void> }, closeFeed: () => Promise<void> | void): Promise<void> {
  const stops = new StopSignals().listen(['SIGTERM', 'SIGHUP', 'SIGINT']);
  void stops.first.then(() => screen.close());
  try {
    await screen.done;
  } finally {
    stops.dispose();
    await closeFeed();
  }
}

/**
 * `top --replay FILE`: a recording played back in the console (p pauses, n steps, + and
 * - change the speed); with --json or --once, or off a terminal, the state at the end
 * of the recording, printed once.
 */
async function runReplay(o: TopOptions, file: string): Promise<number> {
  const { updates, bad } = readRecording(file);
  if (bad.length > 0)
    process.stderr.write(
      `routerctl top: ${bad.length} line${bad.length === 1 ? '' : 's'} of ${file} are not recorded updates and were left out (line ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ', …' : ''})\n`,
    );
  const feed = new ReplayFeed(updates);
  const interactive = process.stdout.isTTY === true && process.stdin.isTTY === true;
  if (o.json || o.once || !interactive) {
    while (!feed.done) feed.step();
    const view = feed.get()!;
    if (o.json)
      process.stdout.write(`${JSON.stringify(fleetJson(view, { sort: o.sort, filter: o.filter, reverse: o.reverse }), null, 2)}\n`);
    else
      process.stdout.write(
        formatOnce(view, {
          color: colorEnabled(process.stdout),
          sort: o.sort,
          reverse: o.reverse,
          filter: o.filter,
          blockSize: o.blockSize,
        }),
      );
    // A recording's replicas are history: their states at its end say nothing of the fleet now.
    return 0;
  }
  const { runConsole } = await import('../tui/index.js');
  feed.start();
  const screen = runConsole({
    feed,
    color: colorEnabled(process.stdout),
    title: 'routerctl top --replay',
    target: file,
    intervalMs: o.intervalMs,
    blockSize: o.blockSize,
    sort: o.sort,
    reverse: o.reverse,
    filter: o.filter,
    replay: true,
    onKey: (input) => {
      if (input === 'p' || input === ' ') feed.togglePause();
      else if (input === 'n' && feed.paused) feed.step();
      else if (input === '+') feed.faster();
      else if (input === '-') feed.slower();
    },
  });
  await untilStopped(screen, () => feed.close());
  return 0;
}
