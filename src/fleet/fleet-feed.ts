import type { Agent } from 'undici';
import { createAgent } from './http.js';
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

/** One snapshot of every replica, in `urls` order; the first failure rejects. */
export async function fetchFleetOnce(o: FleetFeedOptions): Promise<{ view: FleetView; snapshots: ReplicaSnapshot[] }> {
  const agent = createAgent();
  try {
    const snapshots = await Promise.all(
      o.urls.map((url) => fetchSnapshot({ url, source: o.source, token: o.token, intervalMs: o.intervalMs, dispatcher: agent })),
    );
    const now = Date.now();
    const statuses: ReplicaStatus[] = snapshots.map((snapshot, i) => ({
      url: o.urls[i]!,
      source: snapshot.source,
      live: true,
      error: null,
      snapshot,
      rates: null,
      receivedAt: now,
    }));
    return { view: mergeReplicas(statuses, now), snapshots };
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

  private constructor(o: FleetFeedOptions, initial: ReplicaSnapshot[] | undefined) {
    this.agent = createAgent();
    this.wasLive = o.urls.map(() => (initial ? true : undefined));
    this.clients = o.urls.map(
      (url, i) =>
        new ReplicaClient(
          { url, source: o.source, token: o.token, intervalMs: o.intervalMs, dispatcher: this.agent },
          (status) => {
            o.onReplicaUpdate?.(status);
            this.remerge();
          },
          initial?.[i],
        ),
    );
    if (initial) this.remerge();
  }

  /**
   * Connect to every replica: one snapshot each first (so a wrong URL or token fails
   * with one line before any screen is drawn), then the live streams.
   */
  static async connect(o: FleetFeedOptions): Promise<FleetFeed> {
    const { snapshots } = await fetchFleetOnce(o);
    const feed = new FleetFeed(o, snapshots);
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
      // Only a replica that answered once can go down; a first answer is not an event.
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
            message: 'router replica answers again: back in the fleet figures',
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
