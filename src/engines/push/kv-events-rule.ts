import type { PushInfo } from './push-info.js';

/**
 * Where a worker that does not advertise its KV events publishes them (vLLM has no
 * `/server_info`): one `--kv-events` entry, for one worker URL or a pattern of them
 * (docs/engine-push.md §Endpoints from the configuration). Endpoints are written as
 * the engine's own `--kv-events-config` writes them: `tcp://*:5557` binds every
 * interface there, and here means the worker URL's host.
 */
export interface KvEventsRule {
  /** A worker URL, or a pattern in which `*` stands for any run of characters. */
  readonly workers: string;
  /**
   * `tcp://host:port`, the PUB socket of DP rank 0; rank r publishes on port + r. Null
   * in an entry that names only a replay endpoint: the worker advertises its own
   * channels and the entry adds the replay socket its descriptor lacks.
   */
  readonly endpoint: string | null;
  /** `tcp://host:port` of the replay ROUTER socket of rank 0, or null when the engine has none. */
  readonly replayEndpoint: string | null;
  readonly topic: string;
  /** Ranks publishing, each on its own port (vLLM offsets both ports by the DP rank). */
  readonly dpSize: number;
  /**
   * The router binds `endpoint` and the engine's publisher connects to it
   * (llm-d-inference-sim's `--zmq-endpoint`, llm-d's convention); absent or false, the
   * engine binds and the router connects (SGLang, vLLM).
   */
  readonly bind?: boolean;
}

/** A parsed `tcp://host:port`; `host` null for a wildcard bind (`*`, `0.0.0.0`, `::`). */
export interface ZmqEndpoint {
  readonly host: string | null;
  readonly port: number;
}

const WILDCARDS = new Set(['*', '0.0.0.0', '::', '[::]']);

/** Parse `tcp://host:port`; a string saying what is wrong when it is not one. */
export function parseZmqEndpoint(text: string): ZmqEndpoint | string {
  const m = /^tcp:\/\/(\[[^\]]+\]|[^:/\s]+):(\d+)$/.exec(text.trim());
  if (!m) {
    if (/^(ipc|inproc):\/\//.test(text.trim()))
      return `'${text}' is a local socket the router cannot reach; give the engine a tcp:// endpoint`;
    return `'${text}' is not tcp://host:port`;
  }
  const port = Number(m[2]);
  if (port < 1 || port > 65_535) return `'${text}' has a port outside 1..65535`;
  const host = m[1]!;
  return { host: WILDCARDS.has(host) ? null : host, port };
}

/**
 * The entry for a worker: an entry naming its URL exactly wins, else the first
 * pattern that matches, in the order written; undefined when none does.
 */
export function kvEventsRuleFor(rules: readonly KvEventsRule[], workerUrl: string): KvEventsRule | undefined {
  const url = trimUrl(workerUrl);
  return (
    rules.find((r) => trimUrl(r.workers) === url) ?? rules.find((r) => r.workers.includes('*') && globMatches(trimUrl(r.workers), url))
  );
}

/**
 * The push facts an entry gives, in the form discovery from `/server_info` gives them;
 * null for an entry that names only a replay endpoint (it amends what the engine
 * advertises: mergePushInfo).
 */
export function pushInfoFromRule(rule: KvEventsRule): PushInfo | null {
  if (rule.endpoint === null) return null;
  const kv = parseZmqEndpoint(rule.endpoint);
  if (typeof kv === 'string') throw new Error(`--kv-events: ${kv}`);
  const replay = ruleReplay(rule);
  return {
    host: kv.host,
    kvPortBase: kv.port,
    kvTopic: rule.topic,
    // The events say it (each BlockStored carries its block size).
    blockSize: null,
    dpSize: rule.dpSize,
    loadPortBase: null,
    loadTopic: 'load',
    replayHost: replay?.host ?? null,
    replayPortBase: replay?.port ?? null,
    replayFrom: replay ? 'config' : null,
    snapshotHost: null,
    snapshotPortBase: null,
    ...(rule.bind === true ? { kvBind: true } : {}),
  };
}

function ruleReplay(rule: KvEventsRule): ZmqEndpoint | null {
  if (rule.replayEndpoint === null) return null;
  const replay = parseZmqEndpoint(rule.replayEndpoint);
  if (typeof replay === 'string') throw new Error(`--kv-events: ${replay}`);
  return replay;
}

/** A worker's push channels, and where they were learnt (`WorkerInfo.pushFrom`). */
export interface MergedPush {
  push: PushInfo | null;
  /** `engine`: its `/server_info` advertised them; `config`: a `--kv-events` entry named them. */
  pushFrom: 'engine' | 'config' | null;
}

/**
 * What the router (and `check-config --probe`) takes for a worker's push channels
 * (docs/engine-push.md §Endpoints from the configuration): an entry with an endpoint
 * replaces what the engine advertises; an entry naming only a replay endpoint keeps
 * the advertised channels (load push included) and sets their replay endpoint, and
 * gives nothing to a worker that advertises no KV events; without an entry, the
 * advertised channels as they are.
 */
export function mergePushInfo(advertised: PushInfo | null, rule: KvEventsRule | undefined): MergedPush {
  if (rule === undefined) return { push: advertised, pushFrom: advertised ? 'engine' : null };
  const own = pushInfoFromRule(rule);
  if (own !== null) return { push: own, pushFrom: 'config' };
  if (advertised === null) return { push: null, pushFrom: null };
  const replay = ruleReplay(rule);
  if (replay === null) return { push: advertised, pushFrom: 'engine' };
  return { push: { ...advertised, replayHost: replay.host, replayPortBase: replay.port, replayFrom: 'config' }, pushFrom: 'engine' };
}

function trimUrl(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

/** `*` matches any run of characters (none included); everything else matches itself. */
export function globMatches(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!text.startsWith(first) || text.length < first.length + last.length || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = text.indexOf(parts[i]!, at);
    if (found < 0 || found + parts[i]!.length > end) return false;
    at = found + parts[i]!.length;
  }
  return true;
}
