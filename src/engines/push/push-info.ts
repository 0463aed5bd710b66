/**
 * Where an SGLang engine publishes (docs/engine-push.md §Discovery): KV events on
 * `endpoint_port_base + rank`, and, when its load publisher is on, `LoadStat` on
 * `load_endpoint_port_base + rank`. The host may be a wildcard the engine bound to:
 * subscribers then use the worker URL's host. The replay socket (and the snapshot
 * socket) are not in SGLang's descriptor: they are read from the raw
 * `kv_events_config` that `/server_info` also carries.
 */
export interface PushInfo {
  /** The host to connect to; null when the engine bound a wildcard (use the worker URL's host). */
  host: string | null;
  kvPortBase: number;
  kvTopic: string;
  /** Tokens per block in the events (subscribers must hash at this size). */
  blockSize: number | null;
  /** Ranks publishing: one socket per rank. */
  dpSize: number;
  loadPortBase: number | null;
  loadTopic: string;
  /** The replay sockets' host; null when a wildcard was bound (use the worker URL's host). */
  replayHost: string | null;
  /** The replay ROUTER socket of rank 0; rank r's is on this port + r. Null: no replay. */
  replayPortBase: number | null;
  /**
   * Which source named the replay endpoint: a replay key in the `kv_events` descriptor
   * itself, the `replay_endpoint` of the raw `kv_events_config`, or a `--kv-events`
   * entry; null when none did.
   */
  replayFrom: 'descriptor' | 'kv_events_config' | 'config' | null;
  /** The snapshot sockets' host (SGLang's `snapshot_endpoint`); null for a wildcard. */
  snapshotHost: string | null;
  /** The snapshot ROUTER socket of rank 0 (rank r on port + r); null when the engine has none. */
  snapshotPortBase: number | null;
  /**
   * The router binds the KV events endpoint and the engine connects to it, as
   * llm-d-inference-sim's publisher does (a `--kv-events` entry with `bind: true`);
   * absent or false: the engine binds and the router connects, as SGLang and vLLM do.
   */
  kvBind?: boolean;
}
