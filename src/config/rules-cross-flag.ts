import { kvEventsRuleFor } from '../engines/index.js';
import { problem } from './problem.js';
import { optionByKey } from './schema.js';
import { shorten } from './shorten.js';
import type { RuleContext } from './rule-context.js';

/**
 * Discovery and cross-flag rules: judged last because they combine several values,
 * each of which must already be right for the combination to mean anything.
 */
export function checkCrossFlags(ctx: RuleContext): void {
  const { config } = ctx;
  const staticFleet = config.workerUrls.length > 0;

  if (staticFleet && ctx.isSet('simWorkers')) {
    ctx.push(
      problem('CROSS_DISCOVERY_CONFLICT', '--worker-urls and --sim-workers are mutually exclusive; pass exactly one', ctx.at('simWorkers')),
    );
  }
  const dns = config.dnsDiscovery;
  if (dns !== null && staticFleet) {
    ctx.push(
      problem(
        'CROSS_DISCOVERY_CONFLICT',
        '--dns-discovery and --worker-urls are mutually exclusive; pass exactly one',
        ctx.at('dnsDiscovery'),
      ),
    );
  }
  if (dns !== null && ctx.isSet('simWorkers')) {
    ctx.push(
      problem(
        'CROSS_DISCOVERY_CONFLICT',
        '--dns-discovery and --sim-workers are mutually exclusive; pass exactly one',
        ctx.at('simWorkers'),
      ),
    );
  }
  if (dns !== null && !dns.trim().startsWith('_') && config.dnsDiscoveryPort === null && !ctx.invalid.has('dnsDiscoveryPort')) {
    ctx.push(
      problem(
        'CROSS_DNS_PORT_REQUIRED',
        `--dns-discovery ${shorten(dns)} names A/AAAA records, which carry no port: add --dns-discovery-port, or name SRV records (_service._tcp.…)`,
        ctx.at('dnsDiscovery'),
      ),
    );
  }
  if (dns === null) {
    // A setting restated at its default (as .routerrc.example does) changes nothing, so it is no mistake.
    for (const key of ['dnsDiscoveryPort', 'dnsResolver', 'dnsDiscoveryScheme', 'discoveryInterval'] as const) {
      if (!ctx.isSet(key) || config[key] === optionByKey(key).default) continue;
      ctx.push(problem('CROSS_DNS_ONLY', `${ctx.flag(key)} has no effect without --dns-discovery; add it or drop this`, ctx.at(key)));
    }
  }
  checkKubernetes(ctx, staticFleet);
  checkEpp(ctx);
  if (staticFleet && ctx.isSet('simRate')) {
    ctx.push(
      problem(
        'CROSS_SIM_ONLY',
        '--sim-rate requires the embedded simulated fleet; it would be ignored with --worker-urls',
        ctx.at('simRate'),
      ),
    );
  }
  if (ctx.isSet('cbCoolDownSecs') && config.cbThreshold === 0) {
    ctx.push(
      problem(
        'CROSS_COOL_DOWN_REQUIRES_THRESHOLD',
        '--cb-cool-down-secs has no effect with --cb-threshold 0 (the circuit breaker is off); drop one of them',
        ctx.at('cbCoolDownSecs'),
      ),
    );
  }

  // The gate mode decides which gate flags mean anything (docs/routing.md §Gate modes).
  const mode = config.queueGate;
  if (mode === 'tokens' && config.queueGateTokens === null && !ctx.invalid.has('queueGateTokens')) {
    ctx.push(
      problem(
        'CROSS_GATE_TOKENS_REQUIRED',
        '--queue-gate tokens requires --queue-gate-tokens (the queued prompt tokens at which an engine counts as queued)',
        ctx.at('queueGate'),
      ),
    );
  }
  if (mode !== 'tokens' && ctx.isSet('queueGateTokens')) {
    ctx.push(
      problem(
        'CROSS_GATE_TOKENS_UNUSED',
        `--queue-gate-tokens has no effect with --queue-gate ${mode}; add --queue-gate tokens or drop it`,
        ctx.at('queueGateTokens'),
      ),
    );
  }
  if (mode !== 'fixed' && ctx.isSet('saturationQueueFloor')) {
    ctx.push(
      problem(
        'CROSS_GATE_MODE_CONFLICT',
        `--saturation-queue-floor needs --queue-gate fixed (the ${mode} gate has no fixed limit to pin under); drop one of them`,
        ctx.at('saturationQueueFloor'),
      ),
    );
  }
  if ((mode === 'tokens' || mode === 'slo') && ctx.isSet('workerQueueLimit')) {
    ctx.push(
      problem(
        'CROSS_GATE_MODE_CONFLICT',
        mode === 'tokens'
          ? '--worker-queue-limit has no effect with --queue-gate tokens, which counts queued prompt tokens; drop one of them'
          : '--worker-queue-limit has no effect with --queue-gate slo, which holds each engine to --ttft-slo-ms; drop one of them',
        ctx.at('workerQueueLimit'),
      ),
    );
  }
  // The TTFT goal and the two rules that read it (docs/routing.md §SLO gate, §SLO admission).
  const sloUsers = [mode === 'slo' ? '--queue-gate slo' : null, config.admission === 'slo' ? '--admission slo' : null].filter(
    (x): x is string => x !== null,
  );
  if (sloUsers.length > 0 && config.ttftSloMs === null && !ctx.invalid.has('ttftSloMs')) {
    ctx.push(
      problem(
        'CROSS_SLO_REQUIRED',
        `${sloUsers.join(' and ')} ${sloUsers.length > 1 ? 'require' : 'requires'} --ttft-slo-ms (the time to first token you promise, in ms)`,
        ctx.at(mode === 'slo' ? 'queueGate' : 'admission'),
      ),
    );
  }
  if (sloUsers.length === 0 && ctx.isSet('ttftSloMs')) {
    ctx.push(
      problem(
        'CROSS_SLO_UNUSED',
        '--ttft-slo-ms has no effect without --queue-gate slo or --admission slo; add one of them or drop it',
        ctx.at('ttftSloMs'),
      ),
    );
  }

  // The pause is part of the drain: it cannot outlast the ceiling (unset, it is cut to fit).
  if (
    ctx.isSet('shutdownReadinessSecs') &&
    !ctx.invalid.has('shutdownReadinessSecs') &&
    !ctx.invalid.has('shutdownDrainSecs') &&
    config.shutdownReadinessSecs > config.shutdownDrainSecs
  ) {
    ctx.push(
      problem(
        'CROSS_READINESS_ABOVE_DRAIN',
        `--shutdown-readiness-secs (${config.shutdownReadinessSecs}) must be at most --shutdown-drain-secs (${config.shutdownDrainSecs}): the readiness pause is part of the drain`,
        ctx.at('shutdownReadinessSecs'),
      ),
    );
  }
  if (!ctx.invalid.has('loadFreshnessMs') && !ctx.invalid.has('loadPollIntervalMs') && config.loadFreshnessMs < config.loadPollIntervalMs) {
    const key = ctx.isSet('loadFreshnessMs') ? 'loadFreshnessMs' : 'loadPollIntervalMs';
    ctx.push(
      problem(
        'WARN_FRESHNESS_BELOW_POLL',
        `--load-freshness-ms (${config.loadFreshnessMs}) is shorter than --load-poll-interval-ms (${config.loadPollIntervalMs}): samples go stale between polls and the queue gate admits blindly`,
        ctx.at(key),
      ),
    );
  }
  // The millisecond threshold applies only when every compared owner reports an
  // estimated prefill queue time; none of the engine load formats read over HTTP
  // carries one (docs/engine-load.md), so the guard falls back to tokens.
  if (ctx.isSet('pressureAbsThresholdMs') && config.policy === 'cache_aware' && !config.disablePressureGuard) {
    ctx.push(
      problem(
        'WARN_PRESSURE_MS_UNUSED',
        '--pressure-abs-threshold-ms has no effect here: engines polled over HTTP report no prefill-time estimate, so the pressure guard compares --pressure-abs-threshold-tokens',
        ctx.at('pressureAbsThresholdMs'),
      ),
    );
  }
  if (staticFleet && !ctx.invalid.has('kvEvents') && !ctx.invalid.has('workerUrls')) {
    for (const rule of config.kvEvents) {
      if (!config.workerUrls.some((url) => kvEventsRuleFor([rule], url) !== undefined)) {
        ctx.push(
          problem(
            'WARN_KV_EVENTS_UNMATCHED',
            `--kv-events '${shorten(rule.workers)}' matches none of --worker-urls; check the URL or pattern (* matches anything)`,
            ctx.at('kvEvents'),
          ),
        );
      }
    }
  }
  if (config.adminToken === null && !isLoopback(config.host)) {
    ctx.push(
      problem(
        'WARN_ADMIN_API_OPEN',
        `--host ${shorten(config.host)} is reachable from other machines and --admin-token is unset, so /admin/* is open to them`,
        ctx.at('host'),
      ),
    );
  }
}

/** `--epp` and `--epp-host` (docs/endpoint-picker.md): the picker's own port, bound only when asked for. */
function checkEpp(ctx: RuleContext): void {
  const { config } = ctx;
  if (config.epp === null) {
    if (ctx.isSet('eppHost') && config.eppHost !== optionByKey('eppHost').default)
      ctx.push(problem('CROSS_EPP_ONLY', '--epp-host has no effect without --epp; add --epp PORT or drop this', ctx.at('eppHost')));
    return;
  }
  if (config.epp !== 0 && config.epp === config.port && !ctx.invalid.has('epp') && !ctx.invalid.has('port'))
    ctx.push(problem('CROSS_EPP_PORT', `--epp ${config.epp} is also --port: give the endpoint picker a port of its own`, ctx.at('epp')));
}

/** `--service-discovery` and its settings (docs/http-edge.md §Kubernetes discovery): one source of the fleet, and one thing to watch. */
function checkKubernetes(ctx: RuleContext, staticFleet: boolean): void {
  const { config } = ctx;
  if (!config.serviceDiscovery) {
    const keys = [
      'selector',
      'serviceDiscoveryService',
      'inferencePool',
      'serviceDiscoveryNamespace',
      'serviceDiscoveryPort',
      'kubeconfig',
    ] as const;
    for (const key of keys) {
      if (!ctx.isSet(key) || (key === 'selector' && config.selector.length === 0)) continue;
      ctx.push(problem('CROSS_KUBE_ONLY', `${ctx.flag(key)} has no effect without --service-discovery; add it or drop this`, ctx.at(key)));
    }
    return;
  }
  const others: [string, boolean, Parameters<RuleContext['at']>[0]][] = [
    ['--worker-urls', staticFleet, 'workerUrls'],
    ['--sim-workers', ctx.isSet('simWorkers'), 'simWorkers'],
    ['--dns-discovery', config.dnsDiscovery !== null, 'dnsDiscovery'],
  ];
  for (const [flag, set, key] of others) {
    if (!set) continue;
    ctx.push(problem('CROSS_DISCOVERY_CONFLICT', `--service-discovery and ${flag} are mutually exclusive; pass exactly one`, ctx.at(key)));
  }
  const bySelector = config.selector.length > 0;
  const byService = config.serviceDiscoveryService !== null;
  const byPool = config.inferencePool !== null;
  // The pool names its pods and their port (spec.selector, spec.targetPorts).
  if (byPool) {
    const named: [boolean, Parameters<RuleContext['at']>[0], string][] = [
      [bySelector, 'selector', "--inference-pool and --selector are mutually exclusive: the pool's selector picks the pods"],
      [
        byService,
        'serviceDiscoveryService',
        "--inference-pool and --service-discovery-service are mutually exclusive: the pool's pods, or a Service's EndpointSlices",
      ],
      [
        ctx.isSet('serviceDiscoveryPort'),
        'serviceDiscoveryPort',
        "--inference-pool and --service-discovery-port are mutually exclusive: the pool's targetPorts name the engines' port",
      ],
    ];
    for (const [set, key, message] of named) if (set) ctx.push(problem('CROSS_DISCOVERY_CONFLICT', message, ctx.at(key)));
  }
  if (bySelector && byService) {
    ctx.push(
      problem(
        'CROSS_DISCOVERY_CONFLICT',
        "--selector and --service-discovery-service are mutually exclusive: pods by label, or a Service's EndpointSlices",
        ctx.at('serviceDiscoveryService'),
      ),
    );
  }
  const unsure = ctx.invalid.has('selector') || ctx.invalid.has('serviceDiscoveryService') || ctx.invalid.has('inferencePool');
  if (!bySelector && !byService && !byPool && !unsure) {
    ctx.push(
      problem(
        'CROSS_KUBE_TARGET_REQUIRED',
        '--service-discovery needs --selector k=v (pods by label), --service-discovery-service NAME (its EndpointSlices) or --inference-pool NAME (its pods)',
        ctx.at('serviceDiscovery'),
      ),
    );
  }
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
