import { isIPv4 } from 'node:net';
import { checkKvEvents } from './kv-events-value.js';
import { parseSelector } from './label-selector.js';
import { shorten } from './shorten.js';
import { problem } from './problem.js';
import type { RuleContext } from './rule-context.js';
import { OPTIONS } from './schema.js';
import type { ConfigKey, OptionSpec, Range } from './schema.js';

/**
 * Value rules: a value that is wrong whatever the policy. They run before the policy
 * rules so that `--policy round_robin --worker-queue-limit 0` reports the bad value,
 * not the policy (docs/configuration.md §Why value errors come before policy errors).
 * Schema order is the reference order (docs/configuration.md §Value check order).
 */
export function checkValues(ctx: RuleContext): void {
  for (const spec of OPTIONS) {
    const key = spec.key as ConfigKey;
    switch (key) {
      case 'saturationQueueFloor':
        checkFloor(ctx);
        continue;
      case 'cacheCandidateMaxWorkers':
        checkCandidateBounds(ctx);
        continue;
      case 'workerUrls':
        checkUrls(ctx);
        continue;
      case 'kvEvents':
        checkKvEvents(ctx);
        continue;
      case 'dnsResolver':
        checkResolver(ctx);
        continue;
      case 'selector':
        checkSelector(ctx);
        continue;
      default:
        break;
    }
    const value = ctx.config[key];
    if (typeof value === 'string' && ctx.isSet(key) && value === '') {
      ctx.invalid.add(key);
      ctx.push(problem('VALUE_EMPTY', `${ctx.flag(key)} must be non-empty`, ctx.at(key)));
    }
    if (typeof value === 'number' && spec.range) {
      const broken = rangeViolation(spec as OptionSpec, spec.range, value);
      if (broken !== null) {
        ctx.invalid.add(key);
        ctx.push(problem('VALUE_RANGE', `${ctx.flag(key)} ${broken}`, ctx.at(key)));
      }
    }
  }
  checkValueWarnings(ctx);
}

/** The reference wording for each kind of range, or null when `value` is inside it. */
export function rangeViolation(spec: OptionSpec, range: Range, value: number): string | null {
  const real = spec.type === 'number';
  if (range.unitInterval && !(Number.isFinite(value) && value >= 0 && value <= 1)) return 'must be finite and in [0, 1]';
  if (range.nonNegative && !(Number.isFinite(value) && value >= 0)) return 'must be finite and non-negative';
  if (range.greaterThan !== undefined && !(value > range.greaterThan && (!real || Number.isFinite(value)))) {
    return real ? `must be finite and greater than ${range.greaterThan}` : `must be greater than ${range.greaterThan}`;
  }
  if (range.atLeast !== undefined && !(value >= range.atLeast)) return `must be at least ${range.atLeast}`;
  if (range.atMost !== undefined && !(value <= range.atMost)) return `must be at most ${range.atMost} (got ${shorten(String(value))})`;
  return null;
}

/** The floor, in the reference order: requires the limit, at least 1, at most the limit (docs/configuration.md §Value check order). */
function checkFloor(ctx: RuleContext): void {
  const floor = ctx.config.saturationQueueFloor;
  const limit = ctx.config.workerQueueLimit;
  if (floor === null) return;
  const at = ctx.at('saturationQueueFloor');
  if (limit === null) {
    ctx.invalid.add('saturationQueueFloor');
    ctx.push(
      problem(
        'VALUE_FLOOR_REQUIRES_LIMIT',
        '--saturation-queue-floor requires --worker-queue-limit (there is no diversion to cancel without it)',
        at,
      ),
    );
    return;
  }
  if (floor < 1) {
    ctx.invalid.add('saturationQueueFloor');
    ctx.push(problem('VALUE_RANGE', '--saturation-queue-floor must be at least 1', at));
    return;
  }
  if (!ctx.invalid.has('workerQueueLimit') && floor > limit) {
    ctx.invalid.add('saturationQueueFloor');
    ctx.push(problem('VALUE_FLOOR_ABOVE_LIMIT', `--saturation-queue-floor (${floor}) must be at most --worker-queue-limit (${limit})`, at));
  }
}

function checkCandidateBounds(ctx: RuleContext): void {
  const min = ctx.config.cacheCandidateMinWorkers;
  const max = ctx.config.cacheCandidateMaxWorkers;
  if (min >= 1 && max >= 1 && min <= max) return;
  // Blame the bound the operator set (the defaults, 8 and 32, are consistent).
  const key: ConfigKey =
    ctx.isSet('cacheCandidateMinWorkers') && (min < 1 || !ctx.isSet('cacheCandidateMaxWorkers'))
      ? 'cacheCandidateMinWorkers'
      : 'cacheCandidateMaxWorkers';
  ctx.invalid.add(key);
  ctx.push(
    problem(
      'VALUE_CANDIDATE_BOUNDS',
      '--cache-candidate-min-workers and --cache-candidate-max-workers must be positive and min must not exceed max',
      ctx.at(key),
    ),
  );
}

/** The URL rules (docs/configuration.md §Value rules): no empty entries, valid URLs, http or https, no duplicates (trailing `/` ignored). */
function checkUrls(ctx: RuleContext): void {
  const at = ctx.at('workerUrls');
  const seen = new Set<string>();
  let bad = false;
  for (const entry of ctx.config.workerUrls) {
    if (entry === '') {
      bad = true;
      ctx.push(problem('VALUE_URL_EMPTY', '--worker-urls must not contain empty or whitespace-only entries', at));
      continue;
    }
    const why = urlProblem(entry);
    if (why !== null) {
      bad = true;
      ctx.push(
        why.scheme
          ? problem(
              'VALUE_URL_SCHEME',
              `--worker-urls entry '${shorten(entry)}' has unsupported scheme '${shorten(why.scheme)}' (use http or https)`,
              at,
            )
          : problem('VALUE_URL_INVALID', `--worker-urls entry '${shorten(entry)}' is not a valid URL: ${shorten(why.reason)}`, at),
      );
      continue;
    }
    if (seen.has(entry)) {
      bad = true;
      ctx.push(problem('VALUE_URL_DUPLICATE', `--worker-urls contains duplicate entry '${shorten(entry)}'`, at));
    }
    seen.add(entry);
  }
  if (bad) ctx.invalid.add('workerUrls');
}

function urlProblem(entry: string): { scheme?: string; reason: string } | null {
  // `localhost:8000` parses as scheme "localhost:"; say what is really missing.
  if (!entry.includes('://')) return { reason: 'missing scheme, e.g. http://host:port' };
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return { reason: 'cannot be parsed' };
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme !== 'http' && scheme !== 'https') return { scheme, reason: 'unsupported scheme' };
  return null;
}

function checkValueWarnings(ctx: RuleContext): void {
  if (ctx.isSet('minLoadChoices') && ctx.config.minLoadChoices === 1) {
    ctx.push(
      problem(
        'WARN_MIN_LOAD_CHOICES_ONE',
        '--min-load-choices 1 draws uniformly and leaves no backup for admission or the pressure guards',
        ctx.at('minLoadChoices'),
      ),
    );
  }
  if (ctx.origins.adminToken.source === 'flag') {
    ctx.push(
      problem(
        'WARN_SECRET_ON_COMMAND_LINE',
        '--admin-token on the command line is visible to other users in ps; use ROUTERCTL_ADMIN_TOKEN or the rc file',
        ctx.at('adminToken'),
      ),
    );
  }
}

/** `--dns-resolver`: an IP address and a port, as node's resolver takes them (`[::1]:53` for IPv6). */
function checkResolver(ctx: RuleContext): void {
  const v = ctx.config.dnsResolver;
  if (v === null) return;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,5})$/.exec(v.trim());
  const port = m ? Number(m[3]) : 0;
  if (m && port >= 1 && port <= 65535 && (m[2] === undefined || isIPv4(m[2]))) return;
  ctx.invalid.add('dnsResolver');
  ctx.push(
    problem('VALUE_DNS_RESOLVER', `--dns-resolver must be HOST:PORT, an IP address and a port (got ${shorten(v)})`, ctx.at('dnsResolver')),
  );
}

/** `--selector`: equality terms only, as the Rust sgl-router takes them (docs/http-edge.md §Kubernetes discovery). */
function checkSelector(ctx: RuleContext): void {
  const parsed = parseSelector(ctx.config.selector);
  if (parsed.ok) return;
  ctx.invalid.add('selector');
  ctx.push(problem('VALUE_SELECTOR', `--selector takes k=v label terms (got ${shorten(parsed.bad) || "''"})`, ctx.at('selector')));
}
