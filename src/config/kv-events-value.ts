import { parseZmqEndpoint } from '../engines/index.js';
import type { KvEventsRule } from '../engines/index.js';
import { didYouMean } from '../cli/index.js';
import type { Coerced, SourceKind } from './coerced.js';
import { problem } from './problem.js';
import type { RuleContext } from './rule-context.js';
import { shorten } from './shorten.js';

/**
 * `--kv-events`: a mapping from a worker URL or pattern to where it publishes
 * (docs/configuration.md §KV event endpoints). In an rc file it is a mapping; on the
 * command line and in ROUTERCTL_KV_EVENTS, the same mapping as JSON. Each entry's
 * keys may be kebab-case, camelCase, or vLLM's own snake_case, so the engine's
 * `--kv-events-config` can be pasted as it is; its keys that only concern the engine
 * (buffer sizes, the high-water mark) are accepted and ignored.
 */
const FIELDS: Record<string, 'endpoint' | 'replayEndpoint' | 'topic' | 'dpSize' | 'publisher' | 'enable' | 'bind' | 'engineOnly'> = {
  endpoint: 'endpoint',
  bind: 'bind',
  'replay-endpoint': 'replayEndpoint',
  replayEndpoint: 'replayEndpoint',
  replay_endpoint: 'replayEndpoint',
  topic: 'topic',
  'dp-size': 'dpSize',
  dpSize: 'dpSize',
  dp_size: 'dpSize',
  publisher: 'publisher',
  enable_kv_cache_events: 'enable',
  buffer_steps: 'engineOnly',
  hwm: 'engineOnly',
  max_queue_size: 'engineOnly',
};

const SHOWN_FIELDS = ['endpoint', 'replay-endpoint', 'topic', 'dp-size', 'bind'];

export function coerceKvEvents(raw: unknown, flag: string, kind: SourceKind): Coerced {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '')
      return kind === 'flag' ? { ok: false, code: 'PARSE_MISSING_VALUE', message: `${flag} needs a value` } : { ok: true, value: [] };
    try {
      value = JSON.parse(raw) as unknown;
    } catch (err) {
      return fail(
        'PARSE_INVALID_TYPE',
        `invalid value for ${flag}: not JSON (${(err as Error).message}); expected {"http://worker:8000": {"endpoint": "tcp://*:5557"}}`,
      );
    }
  } else if (kind === 'flag' && raw === true) {
    return { ok: false, code: 'PARSE_MISSING_VALUE', message: `${flag} needs a value` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return fail(
      'PARSE_INVALID_TYPE',
      `invalid value for ${flag}: expected a mapping from worker URL (or pattern) to {endpoint, replay-endpoint, topic, dp-size}, got ${kindOf(value)}`,
    );
  }
  const rules: KvEventsRule[] = [];
  for (const [workers, entry] of Object.entries(value as Record<string, unknown>)) {
    const at = `${flag} '${shorten(workers)}'`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      return fail('PARSE_INVALID_TYPE', `invalid value for ${at}: expected a mapping with an endpoint, got ${kindOf(entry)}`);
    let endpoint: string | undefined;
    let replayEndpoint: string | null = null;
    let topic = '';
    let dpSize = 1;
    let bind = false;
    for (const [key, v] of Object.entries(entry as Record<string, unknown>)) {
      const field = FIELDS[key];
      if (field === undefined) {
        const guess = didYouMean(key, SHOWN_FIELDS);
        return fail(
          'PARSE_UNKNOWN_KEY',
          `unknown key ${shorten(key)} in ${at}; ${guess ? `did you mean ${guess}?` : `an entry has ${SHOWN_FIELDS.join(', ')}`}`,
        );
      }
      if (field === 'engineOnly') continue;
      if (field === 'bind') {
        if (typeof v !== 'boolean')
          return fail('PARSE_INVALID_TYPE', `invalid value for ${at} ${key}: expected true or false, got ${kindOf(v)}`);
        bind = v;
        continue;
      }
      if (field === 'dpSize') {
        if (typeof v !== 'number' || !Number.isSafeInteger(v))
          return fail('PARSE_NOT_A_NUMBER', `invalid value for ${at} ${key}: expected an integer, got ${kindOf(v)}`);
        dpSize = v;
        continue;
      }
      if (field === 'enable') {
        if (v === false)
          return fail('PARSE_INVALID_TYPE', `${at} says enable_kv_cache_events: false; drop the entry, or turn the engine's events on`);
        continue;
      }
      if (field === 'replayEndpoint' && v === null) continue;
      if (typeof v !== 'string') return fail('PARSE_INVALID_TYPE', `invalid value for ${at} ${key}: expected a string, got ${kindOf(v)}`);
      if (field === 'publisher') {
        if (v !== 'zmq')
          return fail('PARSE_INVALID_CHOICE', `${at} has publisher '${shorten(v)}'; the router subscribes to the zmq publisher only`);
      } else if (field === 'endpoint') endpoint = v.trim();
      else if (field === 'replayEndpoint') replayEndpoint = v.trim() === '' ? null : v.trim();
      else topic = v;
    }
    // A replay-only entry amends an engine that advertises its channels but not its replay socket (SGLang).
    if (endpoint === undefined && replayEndpoint === null) {
      return fail(
        'PARSE_MISSING_VALUE',
        `${at} needs an endpoint, e.g. "tcp://*:5557", or a replay-endpoint alone for an engine that advertises its own, e.g. "tcp://*:5558"`,
      );
    }
    rules.push({ workers: workers.trim(), endpoint: endpoint ?? null, replayEndpoint, topic, dpSize, ...(bind ? { bind } : {}) });
  }
  return { ok: true, value: rules };
}

/**
 * The value rule: each entry names workers by an http(s) URL or pattern, and its
 * endpoints are tcp://host:port with room for every rank's port; the replay socket is
 * on the endpoint's host (both are the same engine's). An entry may name only a
 * replay endpoint: the engine then advertises the rest (SGLang's descriptor has no
 * replay key).
 */
export function checkKvEvents(ctx: RuleContext): void {
  const bad = (message: string): void => {
    ctx.invalid.add('kvEvents');
    ctx.push(problem('VALUE_KV_EVENTS', message, ctx.at('kvEvents')));
  };
  const bound = new Map<string, string>();
  for (const rule of ctx.config.kvEvents) {
    const at = `--kv-events '${shorten(rule.workers)}'`;
    if (!/^https?:\/\/[^/\s]/.test(rule.workers)) {
      bad(`${at}: name workers by their http(s) URL, as in --worker-urls (* matches anything)`);
      continue;
    }
    if (rule.bind === true) {
      // One bound socket is one engine's stream: its sequence numbers and blocks are that engine's alone.
      if (rule.endpoint === null) bad(`${at}: bind needs an endpoint for the router to bind, e.g. "tcp://127.0.0.1:5557"`);
      else if (rule.workers.includes('*'))
        bad(`${at}: bind names one worker, not a pattern: each engine connects to an endpoint of its own`);
      else if (rule.dpSize !== 1) bad(`${at}: bind takes one rank (dp-size 1): each rank connects to an endpoint of its own`);
      else if (bound.has(rule.endpoint))
        bad(`${at}: ${rule.endpoint} is already bound for '${shorten(bound.get(rule.endpoint)!)}'; give each engine its own`);
      else bound.set(rule.endpoint, rule.workers);
      if (rule.endpoint === null || rule.workers.includes('*') || rule.dpSize !== 1) continue;
    }
    if (rule.dpSize < 1 || rule.dpSize > 1024) {
      bad(`${at}: dp-size must be in 1..1024 (got ${rule.dpSize})`);
      continue;
    }
    const kv = rule.endpoint === null ? null : parseZmqEndpoint(rule.endpoint);
    if (typeof kv === 'string') {
      bad(`${at}: endpoint ${kv}`);
      continue;
    }
    if (kv !== null && kv.port + rule.dpSize - 1 > 65_535) bad(`${at}: ${rule.dpSize} ranks from port ${kv.port} run past 65535`);
    if (rule.replayEndpoint === null) continue;
    const replay = parseZmqEndpoint(rule.replayEndpoint);
    if (typeof replay === 'string') bad(`${at}: replay-endpoint ${replay}`);
    // A replay-only entry: the engine advertises its own endpoint and ranks, so only the replay port is checked.
    else if (kv === null) {
      if (replay.port + rule.dpSize - 1 > 65_535) bad(`${at}: ${rule.dpSize} replay ranks from port ${replay.port} run past 65535`);
    } else if (replay.host !== kv.host)
      bad(`${at}: replay-endpoint is on ${replay.host ?? '*'}, endpoint on ${kv.host ?? '*'}; the router reaches both on one host`);
    else if (replay.port + rule.dpSize - 1 > 65_535) bad(`${at}: ${rule.dpSize} replay ranks from port ${replay.port} run past 65535`);
    else if (Math.abs(replay.port - kv.port) < rule.dpSize)
      bad(`${at}: the replay ports overlap the endpoint ports (${rule.dpSize} ranks each)`);
  }
}

function fail(code: Extract<Coerced, { ok: false }>['code'], message: string): Coerced {
  return { ok: false, code, message };
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `'${shorten(v)}'`;
  return `${typeof v} ${shorten(String(v))}`;
}
