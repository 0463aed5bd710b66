/**
 * BENCHMARKS.md's claims table, as data: a row per claim, naming the results file it
 * rests on and how its figure reads there. `npm run docs` writes the table from these
 * rows and perf/results, so a figure in the table is the one a run wrote: its commit,
 * its date, its flags. A result seeded from old prose (`"source": "BENCHMARKS.md"`)
 * says so in its row; a key a row reads that a result lacks stops the generator.
 */
import type { Figures, PerfResult } from './results.js';

/** What a row reads from its result: each accessor throws when the key is missing or of another kind. */
export interface Reading {
  readonly num: (key: string) => number;
  readonly text: (key: string) => string;
  readonly bool: (key: string) => boolean;
  /** A figure the benchmark judged against a goal, by the goal's claim. */
  readonly judged: (claim: string) => number;
}

export interface Claim {
  /** The results file: perf/results/<result>.json. */
  readonly result: string;
  /** BENCHMARKS.md's section that explains it. */
  readonly section: number;
  readonly claim: string;
  readonly figure: (r: Reading) => string;
  /**
   * Where the claim has a goal: the goals the benchmark judged (by their claim, as the
   * result file writes them; goal and verdict are read from there), or a goal judged
   * here from the figures when the benchmark writes none.
   */
  readonly goal?: { readonly judged: readonly string[] } | { readonly text: string; readonly met: (r: Reading) => boolean };
}

const group = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
/** 5263 → "5,263"; 1.385 → "1.39". */
export const fmt = (n: number): string => group.format(n);
const pct = (share: number): string => fmt(Math.round(share * 1000) / 10);
const signed = (n: number): string => (n > 0 ? `+${fmt(n)}` : fmt(n));

/** The decision counts a sim-fidelity fleet wrote, as one JSON text. */
const decisions = (r: Reading, fleet: string): Record<string, number> => JSON.parse(r.text(`${fleet}_decisions`)) as Record<string, number>;

const CELLS = ['cap16_load80', 'cap16_load95', 'cap16_load110', 'cap256_load80', 'cap256_load95', 'cap256_load110'];
/** The worst of six cells, `auto` against the best fixed limit chosen afterwards (points of goodput; below 0: auto behind). */
const autoWorst = (r: Reading): string => {
  const points = CELLS.map((c) => r.num(`${c}_auto_vs_best_fixed_points`));
  const worst = Math.min(...points);
  const cell = CELLS[points.indexOf(worst)]!.replace('cap', 'cap ').replace('_load', ', ');
  return `${signed(worst)} points at worst (${cell} %); ${points.filter((p) => p >= -1).length} of 6 cells within 1 point`;
};
const B2B_FIXED = ['off', 'l2', 'l4', 'l6', 'l8', 'l16', 'floor2'];
/** The cells slo-modes judges by the issue's bar: the trace's six, then (first trace only) b2b-saas and gsp twice. */
const SLO_CELLS = [...CELLS, 'b2b-saas', 'gsp', 'gsp_rate40'];
const sloMet =
  (cells: readonly string[]) =>
  (r: Reading): string => {
    const missed = cells.filter((c) => !r.bool(`${c}_meets_bar`));
    return `${cells.length - missed.length} of ${cells.length} cells${missed.length > 0 ? `; misses ${missed.join(', ').replace(/_load/g, ' ').replace(/_rate/g, ' at ')}` : ''}`;
  };
/** The mean over slo-modes' five fleet seeds of one arm's figure in one cell. */
const sloMean = (r: Reading, cell: string, arm: string, figure = 'goodput_pct'): number =>
  [7, 8, 9, 10, 11].reduce((sum, seed) => sum + r.num(`${cell}_${arm}_seed${seed}_${figure}`), 0) / 5;
const GATE_ARMS = ['off', 'l2', 'l4', 'l6', 'l8', 'l16', 'floor2'];

export const CLAIMS: readonly Claim[] = [
  {
    result: 'routing',
    section: 1,
    claim: 'the gate on a saturated hot-prefix fleet, against plain `cache_aware`',
    figure: (r) =>
      `p99 TTFT ×${fmt(r.num('policy_cache_aware_worker_queue_limit_6_ttft_p99_ms') / r.num('policy_cache_aware_ttft_p99_ms'))}, ` +
      `cached ×${fmt(r.num('policy_cache_aware_worker_queue_limit_6_cached_pct') / r.num('policy_cache_aware_cached_pct'))}`,
  },
  {
    result: 'overhead',
    section: 2,
    claim: 'short prompts: router rate over a `request()` bare proxy',
    figure: (r) => `${fmt(r.num('short_router_over_bare'))}×`,
    goal: { judged: ['short prompts: router rate over the bare proxy'] },
  },
  {
    result: 'overhead',
    section: 2,
    claim: '16 KB prompts: the same',
    figure: (r) => `${fmt(r.num('16k_router_over_bare'))}×`,
    goal: { judged: ['16 KB prompts (4K tokens): router rate over the bare proxy'] },
  },
  {
    result: 'overhead',
    section: 2,
    claim: '100K-token prompts: the same',
    figure: (r) => `${fmt(r.num('400k_router_over_bare'))}×`,
    goal: { judged: ['100K-token prompts: router rate over the bare proxy'] },
  },
  {
    result: 'overhead',
    section: 2,
    claim: '100K-token prompts: p50 added at one connection',
    figure: (r) => `${signed(r.num('400k_added_p50_ms_at_1_connection'))} ms`,
    goal: { judged: ['100K-token prompts: added p50 at one connection'] },
  },
  {
    result: 'overhead',
    section: 2,
    claim: "1,024 connections: the router's rate over its own at 64",
    figure: (r) =>
      `${fmt(r.num('ramp_router_own_rate_most_over_fewest'))}× (the bare proxy's ${fmt(r.num('ramp_bare_own_rate_most_over_fewest'))}×)`,
    goal: { judged: ['ramp: the router keeps its own rate from 64 to 1024 connections'] },
  },
  {
    result: 'second-process',
    section: 2,
    claim: 'a second router process, throughput over one',
    figure: (r) => `${fmt(r.num('two_over_one_min'))}–${fmt(r.num('two_over_one_max'))}×`,
  },
  {
    result: 'prefix',
    section: 2,
    claim: 'prefix key + match, 100K-token prompt',
    figure: (r) => `${fmt(r.num('key_plus_match_100k_us'))} µs`,
    goal: { judged: ['prefix key + match for a 100K-token prompt'] },
  },
  {
    result: 'prefix',
    section: 3,
    claim: 'prefix index memory at one million blocks',
    figure: (r) => `${fmt(r.num('index_arrays_mib'))} MiB (${fmt(r.num('index_bytes_per_block'))} B a block)`,
  },
  {
    result: 'sim',
    section: 4,
    claim: 'one `routerctl sim` engine process',
    figure: (r) => `${fmt(r.num('non_streaming_rps'))} req/s (${fmt(r.num('streaming_rps'))} streamed)`,
  },
  {
    result: 'console',
    section: 5,
    claim: 'an attached console, router throughput',
    figure: (r) => `${signed(r.num('difference_pct'))} % (run-to-run sd ${fmt(r.num('run_to_run_sd_pct'))} %)`,
    goal: { text: 'within noise', met: (r) => r.bool('within_noise') },
  },
  {
    result: 'console-cpu',
    section: 5,
    claim: "the console's own CPU at 200×60, % of a core",
    figure: (r) => `serve ${fmt(r.num('serve_200x60_cpu_pct'))} %, top ${fmt(r.num('top_200x60_cpu_pct'))} %`,
    goal: { judged: ["serve's console at 200×60 (% of a core)", "top's console at 200×60 (% of a core)"] },
  },
  {
    result: 'prometheus',
    section: 6,
    claim: 'parsing a 2,000-line Prometheus exposition',
    figure: (r) => `${fmt(r.num('parse_ms'))} ms`,
  },
  {
    result: 'start-up',
    section: 6,
    claim: '`routerctl --version`; `serve --help`, start to exit, median of 5',
    figure: (r) =>
      `${fmt(r.num('version_median_ms'))} ms; ${fmt(r.num('serve_help_median_ms'))} ms (through yargs ${fmt(r.num('serve_help_from_yargs_median_ms'))})`,
    goal: { judged: ['routerctl --version, median of 5', 'routerctl serve --help, median of 5'] },
  },
  {
    result: 'soak',
    section: 7,
    claim: 'requests lost in a soak with engine faults',
    figure: (r) => `${fmt(r.num('lost'))} of ${fmt(r.num('sent'))} in ${fmt(r.num('duration_s'))} s`,
    goal: { judged: ['requests lost under engine faults (no answer at all)'] },
  },
  {
    result: 'prediction',
    section: 8,
    claim: 'events index: requests sent to the longest prefix holder',
    figure: (r) => `${fmt(r.num('events_to_longest_holder_pct'))} % (from requests ${fmt(r.num('requests_to_longest_holder_pct'))} %)`,
    goal: { judged: ['an events index sends requests to the engine holding their longest prefix'] },
  },
  {
    result: 'event-gap',
    section: 8,
    claim: 'the event gap on bursts: points of cached tokens lost, worst stagger',
    figure: (r) =>
      `${fmt(r.num('burst_events_ttl_0_worst_points_lost'))}; ${fmt(r.num('burst_events_ttl_2000_worst_points_lost'))} with predictions`,
    goal: { judged: ['the event gap costs a burst, --predicted-prefix-ttl-ms 2000 (points of cached tokens, worst stagger)'] },
  },
  {
    result: 'replicas',
    section: 8,
    claim: 'two replicas fed by events: prompts seen alike',
    figure: (r) => `${fmt(r.num('events_prompts_alike_pct'))} %, digests ${r.bool('events_digests_equal') ? 'equal' : 'differ'}`,
  },
  {
    result: 'replicas-late',
    section: 8,
    claim: 'a late replica agrees with the running one, 50K blocks',
    figure: (r) => `${fmt(r.num('target_50000_late_agree_p50_ms'))} ms p50`,
  },
  {
    result: 'load-push',
    section: 8,
    claim: 'a pushed queue change reaches the gate, p90',
    figure: (r) => `${fmt(r.num('push_p90_ms'))} ms (polled ${fmt(r.num('poll_p90_ms'))} ms)`,
    goal: { judged: ["a pushed queue change reaches the router's load table (p90)"] },
  },
  {
    result: 'push',
    section: 8,
    claim: 'decoding a 100K-token `BlockStored`',
    figure: (r) => `${fmt(r.num('event_100k_tokens_decode_us'))} µs`,
  },
  {
    result: 'tokenizer',
    section: 8,
    claim: 'keying a fresh 100K-token prompt as SGLang pages of 1',
    figure: (r) => `${fmt(r.num('page_1_fresh_now_ms'))} ms`,
  },
  {
    result: 'decisions',
    section: 9,
    claim: 'recording a decision, CPU per request',
    figure: (r) => `${fmt(r.num('record_us_per_request'))} µs`,
  },
  {
    result: 'trace',
    section: 10,
    claim: 'a 10,000-request trace through four configurations',
    figure: (r) => `${fmt(r.num('all_four_wall_s'))} s`,
    goal: { judged: ['a 10,000-request trace through four configurations, on the virtual clock'] },
  },
  {
    result: 'trace-conversations',
    section: 10,
    claim: 'virtual replay of the 12,031-request conversation trace, per configuration',
    figure: (r) => `${fmt(r.num('replay_requests_per_s'))} req/s`,
    goal: { judged: ['virtual replay of the 12,031-request conversation trace, per configuration'] },
  },
  {
    result: 'trace-clocks',
    section: 10,
    claim: 'virtual against wall clock: decision mix, cached tokens',
    figure: (r) => `${fmt(r.num('decision_mix_apart_points'))} and ${fmt(r.num('cached_apart_points'))} points apart`,
    goal: {
      judged: [
        'decision mix, virtual against wall clock (points apart, worst configuration)',
        'cached-token ratio, virtual against wall clock (points apart)',
      ],
    },
  },
  {
    result: 'trace-clocks',
    section: 10,
    claim: 'virtual against wall clock: TTFT p50',
    figure: (r) => `${fmt(r.num('ttft_p50_apart_pct'))} % apart`,
    goal: { judged: ['TTFT p50, virtual against wall clock (% apart)'] },
  },
  {
    result: 'ceiling',
    section: 12,
    claim: "`cache_aware`'s cached tokens as a share of the infinite-cache ceiling, conversation-shaped trace",
    figure: (r) =>
      `${fmt(r.num('cache_aware_of_ceiling_pct'))} % (round robin ${fmt(r.num('round_robin_of_ceiling_pct'))} %; ceiling ${fmt(r.num('ceiling_cached_pct'))} %)`,
  },
  {
    result: 'recommend',
    section: 12,
    claim: '`bench compare --recommend`: loads (80, 95, 110 % of saturation) where held-out windows agree with the pick',
    figure: (r) =>
      `${fmt(r.num('loads_agreeing'))} of 3 (the pick ranks ${[80, 95, 110].map((l) => fmt(r.num(`load_${l}_pick_rank_held_out`))).join(', ')} held out)`,
    goal: { judged: ['loads at which the held-out check agrees with the pick'] },
  },
  {
    result: 'gate-sweep',
    section: 13,
    claim: 'a fixed `--worker-queue-limit 2` near capacity (95 %, cap 16, conversation trace): goodput against no gate',
    figure: (r) => `${pct(r.num('cap16_load95_l2_goodput'))} % against ${pct(r.num('cap16_load95_off_goodput'))} %`,
  },
  {
    result: 'gate-sweep',
    section: 13,
    claim: 'past capacity (110 %, cap 16): goodput whatever the limit',
    figure: (r) => {
      const g = GATE_ARMS.map((a) => r.num(`cap16_load110_${a}_goodput`));
      return `${pct(Math.min(...g))}–${pct(Math.max(...g))} % over seven arms`;
    },
  },
  {
    result: 'gate-modes',
    section: 14,
    claim: '`--queue-gate auto` against the best fixed limit chosen afterwards, mean of three fleet seeds',
    figure: autoWorst,
    goal: {
      text: 'within 1 point',
      met: (r) => CELLS.every((c) => r.num(`${c}_auto_vs_best_fixed_points`) >= -1),
    },
  },
  {
    result: 'gate-modes',
    section: 14,
    claim: '`--queue-gate auto` on b2b-saas: goodput against the best fixed limit',
    figure: (r) =>
      `${fmt(r.num('b2b_auto_goodput_pct'))} % against ${fmt(Math.max(...B2B_FIXED.map((a) => r.num(`b2b_${a}_goodput_pct`))))} %`,
  },
  {
    result: 'gate-modes-trace2',
    section: 14,
    claim: 'the same on a held-out trace (`--trace-seed 2`)',
    figure: autoWorst,
    goal: {
      text: 'within 1 point',
      met: (r) => CELLS.every((c) => r.num(`${c}_auto_vs_best_fixed_points`) >= -1),
    },
  },
  {
    result: 'slo-modes',
    section: 19,
    claim:
      "the TTFT goal alone (`--ttft-slo-ms`, the slo gate and admission) against the issue's bar: the conversation trace's cells, b2b-saas, gsp",
    figure: sloMet(SLO_CELLS),
    goal: { text: 'every cell', met: (r) => SLO_CELLS.every((c) => r.bool(`${c}_meets_bar`)) },
  },
  {
    result: 'slo-modes-trace2',
    section: 19,
    claim: 'the same on a held-out trace (`--trace-seed 2`)',
    figure: sloMet(CELLS),
    goal: { text: 'every cell', met: (r) => CELLS.every((c) => r.bool(`${c}_meets_bar`)) },
  },
  {
    result: 'slo-modes',
    section: 19,
    claim: 'past capacity (cap 256, 110 %): goodput with both modes, of all and of the admitted, against plain `cache_aware`',
    figure: (r) =>
      `${fmt(Math.round(sloMean(r, 'cap256_load110', 'both') * 10) / 10)} % (admitted ${fmt(Math.round(sloMean(r, 'cap256_load110', 'both', 'admitted_goodput_pct') * 10) / 10)} %) against ${fmt(Math.round(sloMean(r, 'cap256_load110', 'off') * 10) / 10)} %`,
  },
  {
    result: 'fleet-scale',
    section: 15,
    claim: '4,096 workers: an idle router polling them',
    figure: (r) => `${fmt(r.num('w4096_idle_core_pct'))} % of a core`,
    goal: { judged: ['idle router polling 4,096 workers'] },
  },
  {
    result: 'fleet-scale',
    section: 15,
    claim: "4,096 workers: p50 and p99 over 8 workers' (median of alternated rounds)",
    figure: (r) => `${fmt(r.judged('p50 at 4,096 workers over p50 at 8'))}×; ${fmt(r.judged('p99 at 4,096 workers over p99 at 8'))}×`,
    goal: { judged: ['p50 at 4,096 workers over p50 at 8', 'p99 at 4,096 workers over p99 at 8'] },
  },
  {
    result: 'fleet-scale',
    section: 15,
    claim: '4,096 workers: `/metrics`',
    figure: (r) =>
      `${fmt(r.num('w4096_metrics_ms'))} ms (the first ${fmt(r.num('w4096_metrics_first_ms'))}), ${fmt(r.num('w4096_metrics_kb'))} KB`,
    goal: { judged: ['/metrics at 4,096 workers'] },
  },
  {
    result: 'fleet-scale',
    section: 15,
    claim: '4,096 workers: the full `/admin/state`',
    figure: (r) =>
      `${fmt(r.num('w4096_admin_state_ms'))} ms (the first ${fmt(r.num('w4096_admin_state_first_ms'))}), ${fmt(r.num('w4096_admin_state_kb'))} KB`,
    goal: { judged: ['the full /admin/state at 4,096 workers'] },
  },
  {
    result: 'fleet-scale',
    section: 15,
    claim: '4,096 workers: the largest `/admin/stream` event, the first included; a console whole after attaching',
    figure: (r) =>
      `${fmt(Math.max(r.num('w4096_stream_event_kb'), r.num('w4096_stream_first_event_kb')))} KB; ` +
      `${fmt(r.num('w4096_stream_whole_events'))} events, ${fmt(r.num('w4096_stream_whole_ms'))} ms`,
    goal: { judged: ['/admin/stream per event at 4,096 workers (the largest, the first included, under traffic)'] },
  },
  {
    result: 'fleet-push',
    section: 15,
    claim: '4,096 workers pushing `LoadStat`: an idle router',
    figure: (r) =>
      `${fmt(r.num('push_idle_core_pct'))} % of a core (polled ${fmt(r.num('poll_idle_core_pct'))} %; Node alone ${fmt(r.num('floor_idle_core_pct'))} %)`,
    goal: { judged: ['idle router with 4,096 workers pushing LoadStat'] },
  },
  {
    result: 'console-cpu-fleet',
    section: 15,
    claim: '`top` at 200×60 attached to 4,096 workers, % of a core',
    figure: (r) => `${fmt(r.num('top_200x60_cpu_pct'))} %`,
    goal: { judged: ["top's console at 200×60 attached to 4096 workers (% of a core)"] },
  },
  {
    result: 'gc-mode',
    section: 15,
    claim: "router processes under traffic over 4,096 workers that settle in V8's high-promotion mode",
    figure: (r) => `${fmt(r.num('router_high_mode_processes'))} of ${fmt(r.num('processes'))}`,
  },
  {
    result: 'sim-fidelity',
    section: 16,
    claim: '`routerctl sim` beside llm-d-inference-sim, one workload: queue samples at the limit; `all_queued`; first refusal of 40',
    figure: (r) =>
      `${pct(r.num('sim_waiting_at_limit_share'))} % against ${pct(r.num('llmd_waiting_at_limit_share'))} %; ` +
      `${fmt(decisions(r, 'sim').all_queued ?? 0)} against ${fmt(decisions(r, 'llmd').all_queued ?? 0)}; ` +
      `the ${fmt(r.num('sim_first_refused_of_40'))}th against the ${fmt(r.num('llmd_first_refused_of_40'))}th`,
  },
  ...(['short', '16k', '400k'] as const).map((size): Claim => ({
    result: 'peers',
    section: 17,
    claim: `${{ short: 'short', '16k': '16 KB', '400k': '100K-token' }[size]} prompts beside smg and vllm-router (cache_aware), at their pins`,
    figure: (r) =>
      `${fmt(r.num(`${size}_routerctl_rps`))} req/s: ${fmt(r.num(`${size}_routerctl_over_smg`))}× smg ${r.text('smg_version')}, ` +
      `${fmt(r.num(`${size}_routerctl_over_vllm-router`))}× vllm-router ${r.text('vllm-router_version')}; ` +
      `added p50 ${fmt(r.num(`${size}_routerctl_added_p50_ms`))} ms against ${fmt(r.num(`${size}_smg_added_p50_ms`))} and ${fmt(r.num(`${size}_vllm-router_added_p50_ms`))}`,
    goal: {
      judged: ['smg', 'vllm-router'].flatMap((p) => [
        `${size}: routerctl's rate over ${p}'s`,
        `${size}: routerctl's added p50 minus ${p}'s`,
      ]),
    },
  })),
  ...([1024, 4096] as const).flatMap((n): Claim[] => {
    const of = (r: Reading, who: string, what: string): number => r.num(`${n}_${who}_${what}`);
    const workers = fmt(n);
    return [
      {
        result: 'peers-fleet',
        section: 17,
        claim: `${workers} workers behind each router: p50 / p99 at 8 connections`,
        figure: (r) =>
          `routerctl ${fmt(of(r, 'routerctl', 'p50_ms'))} / ${fmt(of(r, 'routerctl', 'p99_ms'))} ms; smg ${fmt(of(r, 'smg', 'p50_ms'))} / ` +
          `${fmt(of(r, 'smg', 'p99_ms'))}; vllm-router ${fmt(of(r, 'vllm-router', 'p50_ms'))} / ${fmt(of(r, 'vllm-router', 'p99_ms'))}`,
        goal: {
          text: "p50 ≤ each peer's",
          met: (r) => ['smg', 'vllm-router'].every((p) => of(r, 'routerctl', 'p50_ms') <= of(r, p, 'p50_ms')),
        },
      },
      {
        result: 'peers-fleet',
        section: 17,
        claim: `${workers} workers: start to every worker ready; /metrics by curl`,
        figure: (r) =>
          `start ${fmt(of(r, 'routerctl', 'start_s'))} s (smg ${fmt(of(r, 'smg', 'start_s'))}, vllm-router ${fmt(of(r, 'vllm-router', 'start_s'))}); ` +
          `/metrics ${fmt(of(r, 'routerctl', 'metrics_ms'))} ms (${fmt(of(r, 'smg', 'metrics_ms'))}, ${fmt(of(r, 'vllm-router', 'metrics_ms'))})`,
      },
      {
        result: 'peers-fleet',
        section: 17,
        claim: `${workers} workers: an idle router's CPU`,
        figure: (r) =>
          `${pct(of(r, 'routerctl', 'idle_core'))} % of a core; smg ${pct(of(r, 'smg', 'idle_core'))} % (polls every 10 s); ` +
          `vllm-router ${pct(of(r, 'vllm-router', 'idle_core'))} % (polls no load)`,
      },
    ];
  }),
  ...(['cached_pct', 'goodput_pct'] as const).map((what): Claim => {
    const ours = ['routerctl_cache_aware', 'routerctl_no_admission_gate_2', 'routerctl_events'];
    const theirs = ['smg', 'smg_gate_off', 'vllm_router'];
    const v = (r: Reading, arm: string): number => r.num(`${arm}_${what}`);
    const word = what === 'cached_pct' ? 'cached tokens' : 'goodput';
    return {
      result: 'peers-llm-d',
      section: 17,
      claim: `hot-prefix chat in front of three llm-d-inference-sim engines: ${word} beside smg and vllm-router`,
      figure: (r) =>
        `routerctl ${fmt(v(r, ours[0]!))} % (no capacity admission, gate 2: ${fmt(v(r, ours[1]!))} %; KV events: ${fmt(v(r, ours[2]!))} %); ` +
        `smg ${fmt(v(r, 'smg'))} % (own gate off: ${fmt(v(r, 'smg_gate_off'))} %); vllm-router ${fmt(v(r, 'vllm_router'))} %; ` +
        `round robin ${fmt(v(r, 'routerctl_round_robin'))} %`,
      goal: {
        text: "routerctl's best ≥ the best peer's",
        met: (r) => Math.max(...ours.map((a) => v(r, a))) >= Math.max(...theirs.map((a) => v(r, a))),
      },
    };
  }),
  {
    result: 'peers-routing-hot-prefix-seeds',
    section: 17,
    claim: "hot-prefix chat, seed by seed: smg's goodput (own gate off) over routerctl's best arm (no capacity admission, gate 2)",
    figure: (r) => {
      const seeds = r.text('seeds').split(',');
      const per = seeds.map((s) => `${fmt(r.num(`seed_${s}_smg_goodput_pct`))} against ${fmt(r.num(`seed_${s}_routerctl_goodput_pct`))}`);
      return `${fmt(r.num('gap_mean_points'))} points on average (${fmt(r.num('gap_min_points'))} to ${fmt(r.num('gap_max_points'))}): ${per.join('; ')} %`;
    },
  },
  ...(['serve', 'fleet'] as const).map((target): Claim => {
    const cells = ['ttft_p50', 'ttft_p99', 'latency_p50', 'latency_p99'];
    const gaps = (r: Reading, kind: string): string => cells.map((c) => fmt(r.num(`${target}_${c}${kind}_gap_pct`))).join(' / ');
    return {
      result: 'aiperf',
      section: 17,
      claim: `AIPerf beside \`bench run\`, ${target === 'serve' ? 'on `serve`' : 'routerctl in front of a `sim` fleet'}: TTFT p50 / p99, latency p50 / p99, % apart`,
      figure: (r) =>
        `${gaps(r, '')} % (bench TTFT p50 ${fmt(r.num(`${target}_bench_ttft_p50_ms`))} ms, AIPerf ${fmt(r.num(`${target}_aiperf_ttft_p50_ms`))}); ` +
        `AIPerf's records by bench's nearest rank: ${gaps(r, '_rank')} %`,
      goal: { text: '≤ 10 % apart', met: (r) => cells.every((c) => r.num(`${target}_${c}_gap_pct`) <= 10) },
    };
  }),
  ...(['hot-prefix', 'gsp'] as const).flatMap((shape): Claim[] => {
    const workload = shape === 'gsp' ? 'the gsp dataset (16 × 16 prompts)' : 'hot-prefix chat';
    const [ca, gate, rr] = ['policy_cache_aware', 'policy_cache_aware_worker_queue_limit_6', 'policy_round_robin'];
    const [off, offGate] = ['policy_cache_aware_capacity_admission_off', 'policy_cache_aware_capacity_admission_off_worker_queue_limit_2'];
    const [smg, smgOff, vr] = ['smg', 'smg_disable_worker_overload_protection', 'vllm_router'];
    const at = (r: Reading, arm: string, what: string): number => r.num(`${arm}_${what}`);
    const both = (r: Reading, what: string, unit: string): string =>
      `routerctl ${fmt(at(r, ca, what))}${unit} (gate 6: ${fmt(at(r, gate, what))}; no capacity admission: ${fmt(at(r, off, what))}, ` +
      `with gate 2: ${fmt(at(r, offGate, what))}); smg ${fmt(at(r, smg, what))}${unit} (own gate off: ` +
      `${fmt(at(r, smgOff, what))}${unit}); vllm-router ${fmt(at(r, vr, what))}${unit}`;
    return [
      {
        result: `peers-routing-${shape}`,
        section: 17,
        claim: `${workload}: cached tokens beside smg and vllm-router`,
        figure: (r) => `${both(r, 'cached_pct', ' %')}; round robin ${fmt(at(r, rr, 'cached_pct'))} %`,
        goal: {
          text: "routerctl's best ≥ the best peer's",
          met: (r) =>
            Math.max(...[ca, gate, off, offGate].map((arm) => at(r, arm, 'cached_pct'))) >=
            Math.max(at(r, smg, 'cached_pct'), at(r, smgOff, 'cached_pct'), at(r, vr, 'cached_pct')),
        },
      },
      {
        result: `peers-routing-${shape}`,
        section: 17,
        claim: `${workload}: TTFT p99 ms`,
        figure: (r) => both(r, 'ttft_p99_ms', ''),
      },
      {
        result: `peers-routing-${shape}`,
        section: 17,
        claim: `${workload}: goodput (TTFT ≤ 2 s)`,
        figure: (r) => both(r, 'goodput_pct', ' %'),
        goal: {
          text: "routerctl's best ≥ the best peer's",
          met: (r) =>
            Math.max(...[ca, gate, off, offGate].map((arm) => at(r, arm, 'goodput_pct'))) >=
            Math.max(at(r, smg, 'goodput_pct'), at(r, smgOff, 'goodput_pct'), at(r, vr, 'goodput_pct')),
        },
      },
    ];
  }),
  {
    result: 'epp',
    section: 18,
    claim:
      "the endpoint picker's pick: body's end to the held headers answer, over one gRPC connection, beside a health check's round trip",
    figure: (r) =>
      `p50 / p99 ${fmt(r.num('pick_short_p50_us'))} / ${fmt(r.num('pick_short_p99_us'))} µs (14 KB body ${fmt(r.num('pick_16k_p50_us'))} / ` +
      `${fmt(r.num('pick_16k_p99_us'))}); health check ${fmt(r.num('health_check_p50_us'))} / ${fmt(r.num('health_check_p99_us'))} µs`,
  },
  {
    result: 'epp',
    section: 18,
    claim: 'requests a second on one core: Envoy + picker, against `serve` carrying the bytes, and Envoy alone',
    figure: (r) =>
      `${fmt(r.num('envoy_picker_rps'))} against ${fmt(r.num('serve_rps'))} and ${fmt(r.num('envoy_alone_rps'))}; ` +
      `CPU per request: picker ${fmt(r.num('envoy_picker_router_us_per_request'))} µs + Envoy ${fmt(r.num('envoy_picker_envoy_us_per_request'))}, ` +
      `serve ${fmt(r.num('serve_router_us_per_request'))}`,
  },
];

/** The accessors a row reads its result through; `where` names the row in the error. */
export function reading(result: PerfResult, where: string): Reading {
  const f: Figures = result.figures;
  const get = (key: string, kind: string): unknown => {
    const v = f[key];
    if (typeof v !== kind) throw new Error(`${where}: perf/results/${result.name}.json has no ${kind} figure ${key}`);
    return v;
  };
  return {
    num: (key) => get(key, 'number') as number,
    text: (key) => get(key, 'string') as string,
    bool: (key) => get(key, 'boolean') as boolean,
    judged: (claim) => judgedGoal(result, claim, where).figure,
  };
}

function judgedGoal(result: PerfResult, claim: string, where: string): PerfResult['goals'][number] {
  const g = result.goals.find((x) => x.claim === claim);
  if (g === undefined) throw new Error(`${where}: perf/results/${result.name}.json judged no goal "${claim}"`);
  return g;
}

/** One row's cells: figure, goal, met. */
export function claimCells(c: Claim, result: PerfResult): { figure: string; goal: string; met: string } {
  const where = `claim "${c.claim}"`;
  const r = reading(result, where);
  const figure = c.figure(r);
  if (c.goal === undefined) return { figure, goal: '–', met: '–' };
  if ('text' in c.goal) return { figure, goal: c.goal.text, met: c.goal.met(r) ? 'yes' : 'no' };
  const goals = c.goal.judged.map((claim) => judgedGoal(result, claim, where));
  return {
    figure,
    goal: [...new Set(goals.map((g) => g.goal))].join('; '),
    met: goals.every((g) => g.met) ? 'yes' : 'no',
  };
}

/** A run named as the table names it: short commit, day, and "seeded" for figures copied from old prose, not re-run. */
export function runCell(result: PerfResult): string {
  const at = `${(result.commit ?? 'no commit').slice(0, 7)}, ${result.date.slice(0, 10)}`;
  if (result.dirty) return `${at}, uncommitted changes`;
  return result.source === 'BENCHMARKS.md' ? `${at}, seeded: not re-run` : at;
}

/** The command that wrote a result, as `npm run perf -- …` takes it. */
export function commandCell(result: PerfResult, benchmark: string): string {
  return `\`${[benchmark, ...result.args].join(' ')}\``;
}

/**
 * The claims table in Markdown, from the rows above and the results they name.
 * `results` maps a result's name to its file's contents; `benchmarkOf` names the
 * benchmark that writes it.
 */
export function claimsTableMarkdown(results: ReadonlyMap<string, PerfResult>, benchmarkOf: (result: string) => string | undefined): string {
  const lines = [
    '| claim | figure | goal | met | command (`npm run perf -- …`) | run: commit, date | \u00a7 |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const c of CLAIMS) {
    const result = results.get(c.result);
    if (result === undefined) throw new Error(`claim "${c.claim}": no perf/results/${c.result}.json`);
    const benchmark = benchmarkOf(c.result);
    if (benchmark === undefined) throw new Error(`claim "${c.claim}": no benchmark writes perf/results/${c.result}.json`);
    const cells = claimCells(c, result);
    lines.push(
      `| ${c.claim} | ${cells.figure} | ${cells.goal} | ${cells.met} | ${commandCell(result, benchmark)} | ${runCell(result)} | ${c.section} |`,
    );
  }
  return lines.join('\n');
}

/**
 * What limited each run the table names, in the benchmark's own words (a result's
 * `bottleneck`), and the client that drove it: one line a result, in the table's order.
 */
export function bottlenecksMarkdown(results: ReadonlyMap<string, PerfResult>): string {
  const named = [...new Set(CLAIMS.map((c) => c.result))];
  return named
    .map((name) => {
      const r = results.get(name);
      if (r?.bottleneck === undefined) throw new Error(`perf/results/${name}.json names no bottleneck`);
      return `- \`${name}\` (${runCell(r)}): ${r.bottleneck}.`;
    })
    .join('\n');
}
