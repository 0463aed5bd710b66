import type { Agent } from 'undici';
import { createAgent, failureMessage } from './http.js';
import { mergeReplicas } from './merge.js';
import { ReplicaClient, fetchSnapshot } from './replica-client.js';
import type { FleetEvent, FleetView, ReplicaSnapshot, ReplicaStatus, SourceChoice } from './view-model.js';

/** A value that changes over time, in the shape React's useSyncExternalStore wants. */
export interface Store<T> {
  get(): T;
  subscribe(listener: () => void): () => void;
}

export interface FleetFeedOptions {
  urls: string[];
  source: SourceChoice;
  token?: string | undefined;
  intervalMs: number;
  /** Told of every replica update as it arrives, before the views are merged (top --record). */
  onReplicaUpdate?: (status: ReplicaStatus) => void;
}

/**
 * One read of every replica, in `urls` order. A replica that does not answer is down
 * in the view, with the cause, and its snapshot is undefined; the fleet is the others'
 * (docs/metrics-and-admin.md §Replica states). Only when none answers does it reject,
 * with the first replica's error, so a wrong URL or token is one line and exit 1.
 */
export async function fetchFleetOnce(o: FleetFeedOptions): Promise<{ view: FleetView; snapshots: Array<ReplicaSnapshot | undefined> }> {
  const agent = createAgent();
  try {
    const reads = await Promise.allSettled(
      o.urls.map((url) => fetchSnapshot({ url, source: o.source, token: o.token, intervalMs: o.intervalMs, dispatcher: agent })),
    );
    if (!reads.some((r) => r.status === 'fulfilled')) throw (reads[0] as PromiseRejectedResult).reason;
    const now = Date.now();
    const statuses: ReplicaStatus[] = reads.map((read, i) =>
      read.status === 'fulfilled'
        ? { url: o.urls[i]!, source: read.value.source, live: true, error: null, snapshot: read.value, rates: null, receivedAt: now }
        : {
            url: o.urls[i]!,
            source: o.source === 'auto' ? null : o.source,
            live: false,
            error: failureMessage(read.reason),
            snapshot: null,
            rates: null,
            receivedAt: null,
          },
    );
    return { view: mergeReplicas(statuses, now), snapshots: reads.map((r) => (r.status === 'fulfilled' ? r.value : undefined)) };
  } finally {
    await agent.close();
  }
}

/**
 * The live merged view of several router replicas. Each replica has its own client;
 * every update from any of them re-merges (a few hundred workers at most, cheap next
 * to drawing), and listeners are told. Rendering is throttled by Ink, not here.
 */
export class FleetFeed implements Store<FleetView | undefined> {
  private readonly agent: Agent;
  private readonly clients: ReplicaClient[];
  private readonly listeners = new Set<() => void>();
  private view: FleetView | undefined;
  /** Replicas going down and coming back, as the console saw it (no router can report its own death). */
  private readonly replicaEvents: FleetEvent[] = [];
  private readonly wasLive: Array<boolean | undefined>;
  /** Which replicas have answered at least once since the console started. */
  private readonly answered: boolean[] = [];

  private constructor(o: FleetFeedOptions, initial: { view: FleetView; snapshots: Array<ReplicaSnapshot | undefined> } | undefined) {
    this.agent = createAgent();
    // A replica down at the start was not live: its first answer is news (replica_up).
    this.wasLive = o.urls.map((_, i) => (initial ? initial.snapshots[i] !== undefined : undefined));
    this.clients = o.urls.map(
      (url, i) =>
        new ReplicaClient(
          { url, source: o.source, token: o.token, intervalMs: o.intervalMs, dispatcher: this.agent },
          (status) => {
            o.onReplicaUpdate?.(status);
            this.remerge();
          },
          initial?.snapshots[i],
          initial?.view.replicas[i]?.error ?? undefined,
        ),
    );
    if (initial) this.remerge();
  }

  /**
   * Connect to every replica: one snapshot each first (so a wrong URL or token fails
   * with one line before any screen is drawn, unless another replica answers: then it
   * starts down), then the live streams.
   */
  static async connect(o: FleetFeedOptions): Promise<FleetFeed> {
    const feed = new FleetFeed(o, await fetchFleetOnce(o));
    for (const c of feed.clients) c.start();
    return feed;
  }

  /** Start without a first snapshot; replicas show as connecting until they answer. */
  static start(o: FleetFeedOptions): FleetFeed {
    const feed = new FleetFeed(o, undefined);
    for (const c of feed.clients) c.start();
    return feed;
  }

  get = (): FleetView | undefined => this.view;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.stop()));
    await this.agent.close().catch(() => undefined);
  }

  private remerge(): void {
    const statuses = this.clients.map((c) => c.current);
    statuses.forEach((s, i) => {
      const was = this.wasLive[i];
      const answeredBefore = this.answered[i] === true;
      if (s.live) this.answered[i] = true;
      // Only a replica that answered once can go down; a first answer is not an event,
      // unless the replica was down when the console started.
      if (s.snapshot === null || was === s.live || (was === undefined && s.live)) {
        if (s.live) this.wasLive[i] = true;
        return;
      }
      this.wasLive[i] = s.live;
      const e: FleetEvent = s.live
        ? {
            atMs: Date.now(),
            kind: 'replica_up',
            worker: null,
            message: answeredBefore
              ? 'router replica answers again: back in the fleet figures'
              : 'router replica answers: now in the fleet figures',
            replica: s.url,
          }
        : {
            atMs: Date.now(),
            kind: 'replica_down',
            worker: null,
            message: `router replica stopped answering${s.error ? ` (${s.error})` : ''}: left out of the fleet figures`,
            replica: s.url,
          };
      this.replicaEvents.push(e);
      if (this.replicaEvents.length > 20) this.replicaEvents.shift();
    });
    this.view = mergeReplicas(statuses, Date.now(), this.replicaEvents);
    for (const l of this.listeners) l();
  }
}
