// Written by npm run docs (commands/docs/help-module.ts) from what yargs prints; do not edit by hand.

/** Each `--help`, keyed by the words before it (the empty key: `routerctl --help`), as yargs prints it into a pipe. */
export const HELP_TEXT: Readonly<Record<string, string>> = {
  '': `routerctl <command> [options]

Operator CLI and live console for cache-aware routing over SGLang/vLLM fleets.

Commands:
  routerctl serve         Run the router (and, on a terminal, its live console); without
                          --worker-urls, on a simulated fleet
  routerctl top           Live console for a running router (routerctl's admin API, or any router's
                          Prometheus /metrics)
  routerctl explain       Why did a request go where it went: one decision as a story, or every
                          decision as it happens
  routerctl doctor        Where the cached tokens went: a hit-rate breakdown from the router's
                          decision records, with one finding and setting per large loss
  routerctl check-config  Validate flags, environment and rc file exactly as serve would, without
                          starting anything
  routerctl sim           Run simulated SGLang/vLLM engines on loopback for any router to use
  routerctl bench         Drive a workload at a router, compare router configurations on identical
                          simulated fleets, or capture a trace

Options:
  -h, --help     Show help                                                                 [boolean]
  -V, --version  Show version number                                                       [boolean]

Every command has a man page: man routerctl-<command> (files under man/).
`,
  serve: `routerctl serve [settings] [--config PATH]

Runs the cache-aware router in front of --worker-urls; without them, on the embedded simulated fleet
with synthetic traffic. Settings: flags > ROUTERCTL_* env > rc file > defaults (see check-config).

Queue gate and routing policy:
      --policy                  routing policy: round_robin, random, power_of_n, cache_aware
                                                                     [string] [default: cache_aware]
      --worker-queue-limit      divert cache-affine requests once an engine queue (waiting requests,
                                summed over DP ranks) reaches this; scale it with dp-size [integer]
                                                                         [default: unset (gate off)]
      --saturation-queue-floor  when the gate rejected every cache candidate and no worker is
                                provably below this queue, keep the least-pressured prefix owner;
                                1..limit [integer]                        [default: unset (pin off)]
      --queue-gate              when an engine counts as queued: fixed (waiting >=
                                --worker-queue-limit, the reference); auto and tokens are
                                experimental: auto (waiting >= the larger of --worker-queue-limit,
                                default 6, and twice the pool mean), tokens (queued prompt tokens >=
                                --queue-gate-tokens, llm-d tau)            [string] [default: fixed]
      --queue-gate-tokens       with --queue-gate tokens: queued uncached prompt tokens at which an
                                engine counts as queued (prefill tok/s x the TTFT you accept)
                                [integer]                                           [default: unset]
      --power-of-n-choices      workers sampled per request by --policy power_of_n [integer]
                                                                                        [default: 2]

Discovery:
      --worker-urls                  engine base URLs, repeated or space-separated; http(s), no
                                     duplicates   [array] [default: none (embedded simulated fleet)]
      --dns-discovery                a DNS name whose records are the fleet, re-resolved every
                                     --discovery-interval: SRV when it starts with _ (host and port
                                     per record), else A/AAAA with --dns-discovery-port
                                                                             [string] [default: off]
      --dns-discovery-port           the engines' port for A/AAAA records (SRV records carry their
                                     own) [integer]                                  [default: none]
      --dns-discovery-scheme         the scheme of the worker URLs DNS discovery makes
                                                                            [string] [default: http]
      --dns-resolver                 HOST:PORT of the DNS server DNS discovery asks
                                                                    [string] [default: the system's]
      --discovery-interval           seconds between two resolutions of --dns-discovery [number]
                                                                                       [default: 10]
      --service-discovery            watch the Kubernetes API for the fleet: the pods --selector
                                     matches, or the EndpointSlices of --service-discovery-service
                                                                          [boolean] [default: false]
      --selector                     labels a pod must all carry to be a worker under
                                     --service-discovery: k=v, repeated, space- or comma-separated
                                                                             [array] [default: none]
      --service-discovery-service    watch this Service's EndpointSlices (discovery.k8s.io/v1)
                                     instead of pods   [string] [default: none (pods by --selector)]
      --service-discovery-namespace  the Kubernetes namespace --service-discovery watches
           [string] [default: the router pod's own (with --kubeconfig, its context's), else default]
      --service-discovery-port       the engines' port on discovered pods; with
                                     --service-discovery-service, which of the slice's ports
                                     [integer]
                                       [default: 8000 for pods; the slice's port for EndpointSlices]
      --kubeconfig                   a kubeconfig whose current context --service-discovery uses:
                                     server, token or tokenFile, CA, insecure-skip-tls-verify
                                          [string] [default: in-cluster (the pod's service account)]
      --kv-events                    where workers that do not advertise their KV events publish
                                     them (vLLM): a mapping from a worker URL or pattern (* =
                                     anything) to {endpoint, replay-endpoint, topic, dp-size, bind},
                                     endpoints as the engine's --kv-events-config writes them; JSON
                                     on the command line
                                [string] [default: none (SGLang advertises its own in /server_info)]
      --model-id                     the model this router serves; requests naming another model get
                                     404 [string] [default: discovered from the workers' /v1/models]

Server:
      --host             address the router listens on                 [string] [default: 127.0.0.1]
      --port             port the router listens on; 0 picks a free one [integer]   [default: 30000]
      --decision-header  add x-router-decision to every response (decision, matched blocks, the best
                         owner's): 'on' names workers by their position in the pool, 'urls' by URL
                                                                             [string] [default: off]
      --max-body-bytes   largest request body accepted; larger ones get 413 [integer]
                                                                                 [default: 33554432]
      --admin-token      when set, /admin/* requires Authorization: Bearer <token>; prefer
                         ROUTERCTL_ADMIN_TOKEN             [string] [default: none (admin API open)]
      --max-connections  client connections open at once; more are closed on arrival [integer]
                                                                                     [default: 4096]

Load sampling:
      --load-poll-interval-ms  how often each worker's load is polled [integer]       [default: 250]
      --load-freshness-ms      a load sample older than this is not fresh (the gate then admits the
                               worker) [integer]                                     [default: 5000]
      --load-timeout-ms        timeout of one load poll [integer]                    [default: 1000]

Router internals:
      --decision-log-size        routing decisions kept for /admin/decisions, routerctl explain and
                                 doctor, in a ring allocated at start (about 1 KB each); 0 keeps
                                 none [integer]                                      [default: 4096]
      --block-size               tokens per block of the router prefix index [integer] [default: 16]
      --prefix-index-max-blocks  blocks the prefix index keeps before evicting the least recently
                                 used [integer]                                   [default: 1000000]
      --predicted-prefix-ttl-ms  under an events index, how long a prefix the router sent to a
                                 worker counts as held there before its engine announces it (the
                                 event gap: a burst of requests sharing a new prompt); 0 turns it
                                 off [integer]                                       [default: 2000]
      --prefix-source            what the prefix index is built from: 'requests' (what the router
                                 sent where), 'events' (the engines' KV events: what they hold;
                                 without --tokenizer only token-id requests are keyed), 'auto'
                                 (events when every worker publishes them and the router can key
                                 text prompts too, else requests)           [string] [default: auto]
      --tokenizer                the served model's Hugging Face tokenizer.json (or its folder, with
                                 tokenizer_config.json for the chat template): with KV events, text
                                 prompts to SGLang and vLLM workers are keyed by these tokens
                                 (token-id requests need none)              [string] [default: none]

Timeouts and shutdown:
      --request-timeout-secs         upstream request timeout; counts as a breaker failure [number]
                                                                                      [default: 300]
      --shutdown-readiness-secs      after SIGTERM, how long /readyz answers 503 with the listener
                                     open (a load balancer's probe period); then the router exits
                                     once nothing is in flight; at most --shutdown-drain-secs;
                                     SIGINT skips it [number]                           [default: 5]
      --shutdown-drain-secs          the ceiling of a graceful stop: in-flight requests get at most
                                     this long to finish, then are cut; 0 cuts at once; at most 1800
                                     [number]                                          [default: 30]
      --client-header-timeout-secs   a client must send its request line and headers within this,
                                     else 408 and the connection closes [number]       [default: 30]
      --client-request-timeout-secs  a client must send its whole request, body included, within
                                     this, else 408; also caps the header timeout [number]
                                                                                       [default: 60]

Circuit breaker:
      --cb-threshold       consecutive failures that open a worker's circuit breaker; 0 turns the
                           breaker off [integer]                                        [default: 5]
      --cb-cool-down-secs  how long an open breaker keeps the worker out before one trial request;
                           needs the breaker on [number]                               [default: 30]

Simulated fleet (without --worker-urls):
      --sim-workers  engines in the embedded simulated fleet; exclusive with --worker-urls [integer]
                                                                  [default: 4 when no --worker-urls]
      --sim-rate     requests/s of synthetic traffic for the embedded simulated fleet [number]
                                                            [default: auto (~70% of fleet capacity)]

Console and logs:
      --tui         open the live console when stdout is a terminal (--no-tui to disable)
                                                                           [boolean] [default: true]
      --log-format  log line format: text, json                             [string] [default: text]

Cache-aware tuning (reference router parity):
      --min-load-choices                   sample size of the min-load fallback; at least the pool
                                           size picks the exact minimum, 1 draws uniformly [integer]
                                                                                        [default: 2]
      --cache-affinity-min-match-ratio     share of the prompt a prefix owner must hold to keep
                                           affinity; in [0, 1] [number]             [default: unset]
      --cache-candidate-ratio              share of the pool considered as cache candidates; in [0,
                                           1] [number]                               [default: 0.05]
      --cache-candidate-min-workers        lower bound on the number of cache candidates; positive
                                           and at most the max [integer]                [default: 8]
      --cache-candidate-max-workers        upper bound on the number of cache candidates; positive
                                           [integer]                                   [default: 32]
      --cache-affinity-min-matched-tokens  matched prefix tokens a worker needs before cache
                                           affinity applies [integer]                [default: 1024]
      --cache-switch-margin-tokens         owners whose uncached work is within this many tokens of
                                           the least-uncached owner are ranked by prefill pressure;
                                           farther ones are out of the running [integer]
                                                                                     [default: 1024]

Pressure guard (reference router parity):
      --disable-pressure-guard         never let load pressure override cache affinity
                                                                          [boolean] [default: false]
      --pressure-abs-threshold-tokens  absolute pressure gap, in queued uncached tokens, the guard
                                       requires before overriding affinity [integer] [default: 1024]
      --pressure-rel-threshold         the guard overrides cache affinity when the owner is this
                                       many times more pressured; > 1 [number]        [default: 1.5]
      --pressure-abs-threshold-ms      absolute pressure gap, in estimated prefill milliseconds, the
                                       guard requires instead of tokens; needs engines that report a
                                       prefill-time estimate (HTTP-polled engines do not) [number]
                                                                                    [default: unset]

Configuration:
      --config  read settings from this rc file instead of searching for one (YAML, JSON or JS)
                                                                                            [string]

Options:
  -h, --help     Show help                                                                 [boolean]
  -V, --version  Show version number                                                       [boolean]

Examples:
  routerctl serve --worker-queue-limit 6              the embedded simulated fleet, with the queue
                                                      gate on
  routerctl serve --worker-urls                       one engine, log lines only
  http://127.0.0.1:31000 --no-tui
  routerctl serve --port 0 --no-tui --log-format      a free port, JSON logs
  json

SIGTERM drains: /readyz answers 503 and in-flight requests get at most --shutdown-drain-secs to
finish (SIGINT skips the readiness pause); what is left then is cut. A second signal cuts at once.
Exit status 0: every request finished; 143 (SIGTERM) or 130 (SIGINT): some were cut. See man
routerctl-serve.
`,
  top: `routerctl top [--url URL ...] [options]

Shows the fleet behind a router: each engine's queue against the limit, gated workers, gate
rejections, the decision mix and the affinity the gate gave up. Reads routerctl's /admin/stream, or
/metrics of any router (the Rust sgl-router included). Several --url (replicas) merge into one view.

Options:
      --url          router base URL; repeat for router replicas (merged into one view)
                                                       [array] [default: ["http://127.0.0.1:30000"]]
      --engines      show bare SGLang/vLLM engines, no router: their queues and running requests
                     from their load endpoints (instead of --url)                            [array]
      --interval-ms  update interval, 100 to 60000                          [number] [default: 1000]
      --token        admin API bearer token (the router's --admin-token); prefer
                     ROUTERCTL_ADMIN_TOKEN                [string] [default: $ROUTERCTL_ADMIN_TOKEN]
      --source       auto: admin API, else Prometheus /metrics
                                          [choices: "auto", "admin", "prometheus"] [default: "auto"]
      --once         print one plain-text table and exit                  [boolean] [default: false]
      --json         print the merged state as JSON and exit              [boolean] [default: false]
      --watch        with --json: one JSON line per update (NDJSON) until stopped
                                                                          [boolean] [default: false]
      --replay       play a --record FILE back (p pause, n step, + and - speed); with --json or
                     --once: the state at its end                                           [string]
      --record       append every router update to FILE (NDJSON), for review after an incident
                                                                                            [string]
      --sort         initial worker order (key s cycles it)
        [choices: "waiting", "rejections", "running", "inflight", "age", "url"] [default: "waiting"]
      --reverse      turn the worker order around (key S)                 [boolean] [default: false]
      --filter       show only workers whose URL contains this (key /)        [string] [default: ""]
      --block-size   tokens per prefix block, for the ≈tokens of the diverted histogram
                                                                              [number] [default: 16]
      --color        colour on a terminal (--no-color or NO_COLOR turns it off)
                                                                           [boolean] [default: true]
  -h, --help         Show help                                                             [boolean]
  -V, --version      Show version number                                                   [boolean]

Examples:
  routerctl top                                       the console for the router on 127.0.0.1:30000
  routerctl top --url http://10.0.0.5:30000 --url     two replicas, one fleet view
  http://10.0.0.6:30000
  routerctl top --once --sort rejections              one table, workers the gate turns away most
                                                      first
  routerctl top --json | jq '.workers[] | {url,       the merged state for scripts
  waiting, gated}'
  routerctl top --url http://sgl-router:29000         the Rust sgl-router, from its /metrics
  --source prometheus
  routerctl top --json --watch --record               stream the merged state and keep every router
  incident.ndjson                                     update
  routerctl top --engines http://10.0.0.5:30001       engines with no router in front: their queues
  http://10.0.0.6:30001                               side by side

Keys: q quit, p pause, s sort, S reverse, / filter, ? help. Exit status: 0; 1 no replica answers
(unreachable / wrong token / not a router); 2 usage; 3 (--once) a replica draining or down.
`,
  explain: `routerctl explain [--url URL] [--request ID] [options]

Reads a routerctl router's decision records (GET /admin/decisions). With --request, tells one
request's story: what owned its prefix, what the queue gate made of each owner, what was chosen and
given up, and what the engine then reported. Without it, prints the recent decisions one line each
and follows new ones until stopped.

Options:
      --url          router base URL                    [string] [default: "http://127.0.0.1:30000"]
      --request      the request's id (its x-request-id response header, or the client's own
                     x-request-id)                                                          [string]
      --json         the record as JSON (one line per decision when following)
                                                                          [boolean] [default: false]
      --once         print the recent decisions and exit instead of following
                                                                          [boolean] [default: false]
      --limit        recent decisions printed first, 1 to 10000               [number] [default: 20]
      --interval-ms  how often to ask for new decisions, 100 to 60000        [number] [default: 500]
      --token        admin API bearer token (the router's --admin-token); prefer
                     ROUTERCTL_ADMIN_TOKEN                [string] [default: $ROUTERCTL_ADMIN_TOKEN]
  -h, --help         Show help                                                             [boolean]
  -V, --version      Show version number                                                   [boolean]

Examples:
  routerctl explain --request r3f9a1c-2b              why that request went where it went
  routerctl explain                                   every decision as it happens, one line each
  routerctl explain --once --json | jq                the recent diversions, for scripts
  'select(.decision == "cache_worker_queued")'

Exit status: 0; 1 unreachable, wrong token, not a routerctl router, or no such request; 2 usage.
`,
  doctor: `routerctl doctor [--url URL | --file FILE] [--json]

Decomposes the prompt tokens of a router's recent requests into what the engines reused and where
the rest went: held by no worker (a cold workload, or engines too small), gate diversions, routing
misses, capacity (evictions the index did not see, a full KV cache), and a stale index (an engine
that lost its cache). Each loss above 5 % gets one finding with the setting to change.

Options:
      --url      a live router: its decision ring (GET /admin/decisions)
                                                          [string] [default: http://127.0.0.1:30000]
      --file     records saved earlier: routerctl explain --once --json --limit N output, or an
                 /admin/decisions document                                                  [string]
      --json     the breakdown as JSON                                    [boolean] [default: false]
      --token    admin API bearer token (the router's --admin-token); prefer ROUTERCTL_ADMIN_TOKEN
                                                          [string] [default: $ROUTERCTL_ADMIN_TOKEN]
  -h, --help     Show help                                                                 [boolean]
  -V, --version  Show version number                                                       [boolean]

Examples:
  routerctl doctor                                    the router on 127.0.0.1:30000
  routerctl explain --once --json --limit 10000 >     keep the records, diagnose later
  decisions.ndjson && routerctl doctor --file
  decisions.ndjson

Exit status: 0; 1 unreachable, wrong token, not a routerctl router; 2 usage or an unreadable file.
`,
  'check-config': `routerctl check-config [settings] [--config PATH] [--json] [--probe] [--strict]

Resolves every setting (flags > ROUTERCTL_* env > rc file > defaults) and runs the validator serve
runs.
Valid: prints each value and where it came from. Invalid: lists every problem, most important first.

Queue gate and routing policy:
      --policy                  routing policy: round_robin, random, power_of_n, cache_aware
                                                                     [string] [default: cache_aware]
      --worker-queue-limit      divert cache-affine requests once an engine queue (waiting requests,
                                summed over DP ranks) reaches this; scale it with dp-size [integer]
                                                                         [default: unset (gate off)]
      --saturation-queue-floor  when the gate rejected every cache candidate and no worker is
                                provably below this queue, keep the least-pressured prefix owner;
                                1..limit [integer]                        [default: unset (pin off)]
      --queue-gate              when an engine counts as queued: fixed (waiting >=
                                --worker-queue-limit, the reference); auto and tokens are
                                experimental: auto (waiting >= the larger of --worker-queue-limit,
                                default 6, and twice the pool mean), tokens (queued prompt tokens >=
                                --queue-gate-tokens, llm-d tau)            [string] [default: fixed]
      --queue-gate-tokens       with --queue-gate tokens: queued uncached prompt tokens at which an
                                engine counts as queued (prefill tok/s x the TTFT you accept)
                                [integer]                                           [default: unset]
      --power-of-n-choices      workers sampled per request by --policy power_of_n [integer]
                                                                                        [default: 2]

Discovery:
      --worker-urls                  engine base URLs, repeated or space-separated; http(s), no
                                     duplicates   [array] [default: none (embedded simulated fleet)]
      --dns-discovery                a DNS name whose records are the fleet, re-resolved every
                                     --discovery-interval: SRV when it starts with _ (host and port
                                     per record), else A/AAAA with --dns-discovery-port
                                                                             [string] [default: off]
      --dns-discovery-port           the engines' port for A/AAAA records (SRV records carry their
                                     own) [integer]                                  [default: none]
      --dns-discovery-scheme         the scheme of the worker URLs DNS discovery makes
                                                                            [string] [default: http]
      --dns-resolver                 HOST:PORT of the DNS server DNS discovery asks
                                                                    [string] [default: the system's]
      --discovery-interval           seconds between two resolutions of --dns-discovery [number]
                                                                                       [default: 10]
      --service-discovery            watch the Kubernetes API for the fleet: the pods --selector
                                     matches, or the EndpointSlices of --service-discovery-service
                                                                          [boolean] [default: false]
      --selector                     labels a pod must all carry to be a worker under
                                     --service-discovery: k=v, repeated, space- or comma-separated
                                                                             [array] [default: none]
      --service-discovery-service    watch this Service's EndpointSlices (discovery.k8s.io/v1)
                                     instead of pods   [string] [default: none (pods by --selector)]
      --service-discovery-namespace  the Kubernetes namespace --service-discovery watches
           [string] [default: the router pod's own (with --kubeconfig, its context's), else default]
      --service-discovery-port       the engines' port on discovered pods; with
                                     --service-discovery-service, which of the slice's ports
                                     [integer]
                                       [default: 8000 for pods; the slice's port for EndpointSlices]
      --kubeconfig                   a kubeconfig whose current context --service-discovery uses:
                                     server, token or tokenFile, CA, insecure-skip-tls-verify
                                          [string] [default: in-cluster (the pod's service account)]
      --kv-events                    where workers that do not advertise their KV events publish
                                     them (vLLM): a mapping from a worker URL or pattern (* =
                                     anything) to {endpoint, replay-endpoint, topic, dp-size, bind},
                                     endpoints as the engine's --kv-events-config writes them; JSON
                                     on the command line
                                [string] [default: none (SGLang advertises its own in /server_info)]
      --model-id                     the model this router serves; requests naming another model get
                                     404 [string] [default: discovered from the workers' /v1/models]

Server:
      --host             address the router listens on                 [string] [default: 127.0.0.1]
      --port             port the router listens on; 0 picks a free one [integer]   [default: 30000]
      --decision-header  add x-router-decision to every response (decision, matched blocks, the best
                         owner's): 'on' names workers by their position in the pool, 'urls' by URL
                                                                             [string] [default: off]
      --max-body-bytes   largest request body accepted; larger ones get 413 [integer]
                                                                                 [default: 33554432]
      --admin-token      when set, /admin/* requires Authorization: Bearer <token>; prefer
                         ROUTERCTL_ADMIN_TOKEN             [string] [default: none (admin API open)]
      --max-connections  client connections open at once; more are closed on arrival [integer]
                                                                                     [default: 4096]

Load sampling:
      --load-poll-interval-ms  how often each worker's load is polled [integer]       [default: 250]
      --load-freshness-ms      a load sample older than this is not fresh (the gate then admits the
                               worker) [integer]                                     [default: 5000]
      --load-timeout-ms        timeout of one load poll [integer]                    [default: 1000]

Router internals:
      --decision-log-size        routing decisions kept for /admin/decisions, routerctl explain and
                                 doctor, in a ring allocated at start (about 1 KB each); 0 keeps
                                 none [integer]                                      [default: 4096]
      --block-size               tokens per block of the router prefix index [integer] [default: 16]
      --prefix-index-max-blocks  blocks the prefix index keeps before evicting the least recently
                                 used [integer]                                   [default: 1000000]
      --predicted-prefix-ttl-ms  under an events index, how long a prefix the router sent to a
                                 worker counts as held there before its engine announces it (the
                                 event gap: a burst of requests sharing a new prompt); 0 turns it
                                 off [integer]                                       [default: 2000]
      --prefix-source            what the prefix index is built from: 'requests' (what the router
                                 sent where), 'events' (the engines' KV events: what they hold;
                                 without --tokenizer only token-id requests are keyed), 'auto'
                                 (events when every worker publishes them and the router can key
                                 text prompts too, else requests)           [string] [default: auto]
      --tokenizer                the served model's Hugging Face tokenizer.json (or its folder, with
                                 tokenizer_config.json for the chat template): with KV events, text
                                 prompts to SGLang and vLLM workers are keyed by these tokens
                                 (token-id requests need none)              [string] [default: none]

Timeouts and shutdown:
      --request-timeout-secs         upstream request timeout; counts as a breaker failure [number]
                                                                                      [default: 300]
      --shutdown-readiness-secs      after SIGTERM, how long /readyz answers 503 with the listener
                                     open (a load balancer's probe period); then the router exits
                                     once nothing is in flight; at most --shutdown-drain-secs;
                                     SIGINT skips it [number]                           [default: 5]
      --shutdown-drain-secs          the ceiling of a graceful stop: in-flight requests get at most
                                     this long to finish, then are cut; 0 cuts at once; at most 1800
                                     [number]                                          [default: 30]
      --client-header-timeout-secs   a client must send its request line and headers within this,
                                     else 408 and the connection closes [number]       [default: 30]
      --client-request-timeout-secs  a client must send its whole request, body included, within
                                     this, else 408; also caps the header timeout [number]
                                                                                       [default: 60]

Circuit breaker:
      --cb-threshold       consecutive failures that open a worker's circuit breaker; 0 turns the
                           breaker off [integer]                                        [default: 5]
      --cb-cool-down-secs  how long an open breaker keeps the worker out before one trial request;
                           needs the breaker on [number]                               [default: 30]

Simulated fleet (without --worker-urls):
      --sim-workers  engines in the embedded simulated fleet; exclusive with --worker-urls [integer]
                                                                  [default: 4 when no --worker-urls]
      --sim-rate     requests/s of synthetic traffic for the embedded simulated fleet [number]
                                                            [default: auto (~70% of fleet capacity)]

Console and logs:
      --tui         open the live console when stdout is a terminal (--no-tui to disable)
                                                                           [boolean] [default: true]
      --log-format  log line format: text, json                             [string] [default: text]

Cache-aware tuning (reference router parity):
      --min-load-choices                   sample size of the min-load fallback; at least the pool
                                           size picks the exact minimum, 1 draws uniformly [integer]
                                                                                        [default: 2]
      --cache-affinity-min-match-ratio     share of the prompt a prefix owner must hold to keep
                                           affinity; in [0, 1] [number]             [default: unset]
      --cache-candidate-ratio              share of the pool considered as cache candidates; in [0,
                                           1] [number]                               [default: 0.05]
      --cache-candidate-min-workers        lower bound on the number of cache candidates; positive
                                           and at most the max [integer]                [default: 8]
      --cache-candidate-max-workers        upper bound on the number of cache candidates; positive
                                           [integer]                                   [default: 32]
      --cache-affinity-min-matched-tokens  matched prefix tokens a worker needs before cache
                                           affinity applies [integer]                [default: 1024]
      --cache-switch-margin-tokens         owners whose uncached work is within this many tokens of
                                           the least-uncached owner are ranked by prefill pressure;
                                           farther ones are out of the running [integer]
                                                                                     [default: 1024]

Pressure guard (reference router parity):
      --disable-pressure-guard         never let load pressure override cache affinity
                                                                          [boolean] [default: false]
      --pressure-abs-threshold-tokens  absolute pressure gap, in queued uncached tokens, the guard
                                       requires before overriding affinity [integer] [default: 1024]
      --pressure-rel-threshold         the guard overrides cache affinity when the owner is this
                                       many times more pressured; > 1 [number]        [default: 1.5]
      --pressure-abs-threshold-ms      absolute pressure gap, in estimated prefill milliseconds, the
                                       guard requires instead of tokens; needs engines that report a
                                       prefill-time estimate (HTTP-polled engines do not) [number]
                                                                                    [default: unset]

Configuration:
      --config  read settings from this rc file instead of searching for one (YAML, JSON or JS)
                                                                                            [string]

check-config:
      --json    print one JSON object: valid, errors, warnings, config, origins            [boolean]
      --probe   also contact each worker (2 s each, in parallel): reachable, models, load reporting,
                DP size                                                                    [boolean]
      --strict  exit 1 on warnings too                                                     [boolean]

Options:
  -h, --help     Show help                                                                 [boolean]
  -V, --version  Show version number                                                       [boolean]

Examples:
  routerctl check-config --policy round_robin         error: the limit needs --policy cache_aware
  --worker-queue-limit 4
  routerctl check-config --config .routerrc.example   check an rc file
  routerctl check-config --worker-urls                predict an inert queue gate
  http://10.0.0.5:30001 http://10.0.0.6:30001
  --worker-queue-limit 6 --probe
  routerctl check-config --json | jq .errors          machine-readable report

Exit status: 0 valid (warnings allowed), 1 invalid, or warnings with --strict. Error codes: man
routerctl-check-config.
`,
  sim: `routerctl sim [options]

Runs N simulated engines (each its own HTTP port) until SIGINT/SIGTERM.

Options:
  -n, --workers                       number of engines                        [number] [default: 4]
      --port-base                     port of the first engine (the others follow); 0 picks free
                                      ports                                [number] [default: 31000]
      --host                          address to listen on           [string] [default: "127.0.0.1"]
      --flavor                        API and metrics to speak
                                                     [choices: "sglang", "vllm"] [default: "sglang"]
      --model                         served model name       [string] [default: "sim-llama-3.1-8b"]
      --dp-size                       data-parallel ranks per engine           [number] [default: 1]
      --max-running                   running-batch cap per rank (SGLang --max-running-requests,
                                      vLLM --max-num-seqs)                    [number] [default: 32]
      --kv-blocks                     KV cache blocks per rank (vLLM --num-gpu-blocks-override)
                                                                            [number] [default: 8192]
      --max-total-tokens              KV cache size per rank in tokens, instead of --kv-blocks
                                      (SGLang --max-total-tokens)                           [number]
      --block-size                    tokens per KV block                     [number] [default: 16]
      --context-length                the model's context length (SGLang --context-length, vLLM
                                      --max-model-len): a longer prompt plus max_tokens is refused
                                      with the engine's own 400           [number] [default: 131072]
      --schedule-policy               SGLang waiting-queue order: arrival (fcfs) or longest cached
                                      prefix (lpm)        [choices: "fcfs", "lpm"] [default: "fcfs"]
      --max-prefill-tokens            SGLang: input-token budget of one prefill batch
                                                                           [number] [default: 16384]
      --chunked-prefill-size          SGLang: prompt tokens computed per step; -1 turns chunking off
                                                                            [number] [default: 8192]
      --max-num-batched-tokens        vLLM: tokens scheduled per step, decodes and prefill chunks
                                      together                              [number] [default: 8192]
      --max-num-queued-reqs           vLLM: unfinished requests (waiting and running) past which a
                                      request is refused with 503, as vLLM --max-num-queued-reqs
                                                                            [number] [default: none]
      --long-prefill-token-threshold  vLLM: cap on one request's prefill chunk per step
                                                                      [number] [default: 0 (no cap)]
      --speedup                       run simulated time this many times faster than real time
                                                                               [number] [default: 1]
      --seed                          random seed (output lengths, text)      [number] [default: 42]
      --kv-events                     publish KV cache events over ZMQ (BlockStored, BlockRemoved,
                                      AllBlocksCleared), with a replay socket; /server_info
                                      advertises them                     [boolean] [default: false]
      --kv-events-format              KV events positional (array) or tagged (map), as engines
                                      before and after the format change write them
                                                        [choices: "array", "map"] [default: "array"]
      --kv-events-topic               topic of the KV event messages          [string] [default: ""]
      --kv-events-port                first port of the push channels (KV ranks, replay ranks, load
                                      ranks; the next engine's follow); free ports when unset
                                                                                            [number]
      --kv-events-buffer              batches each rank's replay socket keeps (SGLang's
                                      buffer_steps); needs --kv-events     [number] [default: 10000]
      --load-publish                  publish SGLang LoadStat over ZMQ (needs --kv-events, as SGLang
                                      does)                               [boolean] [default: false]
      --as-sglang                     pose as a real SGLang engine: no "simulated" marker in any
                                      JSON, SGLang's SHA-256 block hashes in the KV events
                                                                          [boolean] [default: false]
      --tokenizer                     with --as-sglang: the model's tokenizer.json (or its folder,
                                      with the chat template) for text and chat prompts; the
                                      stand-in tokenizer when unset                         [string]
      --json                          print one JSON object with the URLs [boolean] [default: false]
  -h, --help                          Show help                                            [boolean]
  -V, --version                       Show version number                                  [boolean]

Examples:
  routerctl sim --workers 4 --port-base 31000         four SGLang-style engines on ports 31000-31003
  routerctl sim -n 2 --port-base 0 --json             free ports, machine-readable
  routerctl sim --flavor vllm --dp-size 2 --speedup   vLLM-style engines with two ranks, 10x faster
  10
  routerctl sim --kv-events --load-publish            engines that push KV events and LoadStat as
                                                      SGLang does
  routerctl sim --flavor vllm --kv-events             vLLM engines publishing KV events from port
  --kv-events-port 5557                               5557, as vLLM does by default
  routerctl sim --schedule-policy lpm                 SGLang engines sorting by cached prefix, with
  --max-total-tokens 65536                            a small KV pool
  routerctl sim --as-sglang --tokenizer ./Qwen3-0.6B  engines a router cannot tell from SGLang
  --kv-events --load-publish                          serving that model
`,
  bench: `routerctl bench <run|compare|capture> [options]

Commands:
  routerctl bench run                         Drive one target, an endpoint (--url) or one simulated
                                              configuration, with the chat workload, a --trace or
                                              --workload gsp
  routerctl bench compare [configurations..]  Compare router configurations on identical simulated
                                              fleets, fed the same inputs
  routerctl bench capture [file]              Record a live router's traffic as a trace, to replay
                                              with bench run or bench compare --trace

Options:
  -h, --help     Show help                                                                 [boolean]
  -V, --version  Show version number                                                       [boolean]

Examples:
  routerctl bench run --url http://127.0.0.1:30000    a router already running
  --duration 2m
  routerctl bench compare "--policy round_robin"      two configurations on simulated fleets
  "--worker-queue-limit 6"
  routerctl bench capture today.jsonl --url           record traffic to replay
  http://127.0.0.1:30000 --duration 10m

Each subcommand has its own --help. See man routerctl-bench.
`,
  'embedded-fleet': `routerctl embedded-fleet

Options:
      --workers                                                                [number] [default: 4]
      --seed                                                                  [number] [default: 42]
      --drain-secs                                                            [number] [default: 30]
  -h, --help        Show help                                                              [boolean]
  -V, --version     Show version number                                                    [boolean]
`,
  'bench run': `routerctl bench run --url URL [options]
routerctl bench run [--router-args "SERVE FLAGS"] [--trace FILE | --workload gsp] [options]

Plays a deterministic chat workload (long shared system prompts with Zipf popularity, multi-turn
sessions, Poisson arrivals with bursts), streams every request, and reports TTFT, inter-token
latency, latency, throughput, errors by status and the engine-reported cached-token ratio. Without
--url, the target is one simulated fleet and router started for the run; --trace and --workload gsp
replay on it, on either clock.

Target:
      --url          drive this OpenAI-compatible endpoint (a router or an engine)          [string]
      --router-args  without --url: serve flags of the one simulated router, one quoted string given
                     with = (--router-args="--policy round_robin")            [string] [default: ""]

Workload:
      --workload  chat: sessions of the generated chat workload; gsp: SGLang's
                  generated-shared-prefix dataset, replayed like a trace
                                                          [choices: "chat", "gsp"] [default: "chat"]
      --rate      arrivals per second between bursts (gsp: conversations per second, Poisson)
                              [number] [default: 10 with --url, else --fleet-load; gsp: all at once]
      --seed      workload seed (arrivals, sessions, messages, max_tokens); the simulated fleet uses
                  it too                                                       [number] [default: 7]
      --chat      the chat workload's knobs, KEY=VALUE comma-separated: sessions=128 (conversations
                  open at once), families=16 (system prompts), zipf=1.1 (Zipf exponent of their
                  popularity, 0 uniform), system-tokens=1000-4000 (MIN-MAX tokens of a system
                  prompt), turns=4 (most turns in a session), output-tokens=48 (median max_tokens
                  (lognormal, sigma 0.5)), max-output-tokens=128 (cap on max_tokens), burst=3x3s/15s
                  (FACTORxSECONDS/PERIOD rate bursts, or off)    [array] [default: the values above]
      --gsp       with --workload gsp: SGLang bench_serving's --gsp-* knobs without the prefix,
                  KEY=VALUE comma-separated: num-groups=64 (system prompt groups),
                  prompts-per-group=16 (prompts (conversations) per group), system-prompt-len=2048
                  (system prompt tokens), question-len=128 (question tokens), output-len=256 (output
                  tokens), range-ratio=1 (lengths drawn from [L × ratio, L]), num-turns=1 (turns per
                  conversation), group-distribution=uniform (uniform or zipf), zipf-alpha (with
                  zipf: P(group g) ∝ 1/(g+1)^alpha), ordered=false (group order instead of shuffled)
                                                                 [array] [default: the values above]

Run:
      --duration       how long arrivals go on: 60s, 2m, 500ms or seconds
                                     [string] [default: 60s against --url, 30s on a simulated fleet]
      --grace          after --duration, how long running requests may finish before they are cut
                                      [string] [default: 5s against --url, 30s on a simulated fleet]
      --warmup         leave requests sent in the first part of the run out of the figures
                                                                            [string] [default: "0s"]
      --timeout        per-request limit                                  [string] [default: "120s"]
      --model-name     model to request           [string] [default: the first one /v1/models lists]
      --max-in-flight  requests outstanding at most; arrivals beyond are shed and counted
                                                                            [number] [default: 1024]
      --json           print one JSON object on stdout, nothing else      [boolean] [default: false]

Simulated fleet:
      --sim-workers         simulated engines per configuration                [number] [default: 8]
      --sim-max-running     running-batch cap per engine                       [number] [default: 8]
      --sim-speedup         simulated time per real time (below 1: a slower model)
                                                                             [number] [default: 0.5]
      --sim-kv-blocks       KV cache blocks per engine (16 tokens each)     [number] [default: 1024]
      --sim-context-length  the model's context length per engine: a longer prompt plus output is
                            refused, and counted so                       [number] [default: 131072]
      --sim-flavor          engine API to speak      [choices: "sglang", "vllm"] [default: "sglang"]
      --fleet-load          with no --rate: mean load as a share of the fleet capacity, bursts
                            included                                         [number] [default: 0.9]

Traces and the virtual clock:
      --trace             replay a Mooncake-format trace (JSONL: timestamp ms, input_length,
                          output_length, hash_ids)                                          [string]
      --trace-block-size  tokens per hash id in the trace                    [number] [default: 512]
      --trace-speedup     replay the trace this many times faster              [number] [default: 1]
      --trace-limit       replay only the first N requests                                  [number]
      --trace-window      replay only requests from START to END seconds of trace time: START..END
                                                                                            [string]
      --clock             with --trace or --workload gsp: wall replays over HTTP to real processes
                          in real time; virtual runs the router's own code on a simulated clock, no
                          sockets                     [choices: "wall", "virtual"] [default: "wall"]
      --slo-ttft-ms       goodput counts requests whose TTFT is at most this[number] [default: 2000]

Options:
  -h, --help     Show help                                                                 [boolean]
  -V, --version  Show version number                                                       [boolean]

Examples:
  routerctl bench run --url http://127.0.0.1:30000    a router already running
  --rate 8 --duration 2m
  routerctl bench run --url http://127.0.0.1:30000    fewer, shorter conversations
  --chat sessions=32,turns=2
  routerctl bench run --trace trace.jsonl --clock     a trace, simulated
  virtual --router-args="--worker-queue-limit 4"

Exit status: 0 when the run completed and some request succeeded, 1 when none did or a fleet failed
to start, 2 for invalid options, 130 when interrupted (the report of what ran is still printed). See
man routerctl-bench.
`,
  'bench compare': `routerctl bench compare "SERVE FLAGS A" "SERVE FLAGS B" ... [--sweep FLAG=V1,V2] [options]

Each configuration (one quoted string of serve flags; "" = defaults) gets a fresh simulated fleet
and router (separate processes, same seed, same arrivals) and the results are printed side by side
with the routers' decision counters and charts. --trace and --workload gsp replay the same requests
through each, on the wall clock or the virtual one (the router's own code on a simulated clock, no
sockets).

Positionals:
  configurations  serve flags of each configuration, one quoted string each    [array] [default: []]

Configurations:
      --sweep        FLAG=V1,V2,...: one configuration per value (off = flag left out); several
                     sweeps multiply                                                         [array]
      --router-args  serve flags added to every configuration, given with =
                     (--router-args="--worker-queue-limit 6")                 [string] [default: ""]
      --recommend    with --trace (or --workload gsp) and --clock virtual: pick the best
                     configuration on trace windows 1-3 (seeds for gsp), check it on 4-6, and say
                     whether to set the gate                              [boolean] [default: false]
      --preset       a peer's published benchmark, run as published (its fleet, workload and arms)
                     on the virtual clock (docs/bench.md §Presets)    [string] [choices: "b2b-saas"]

Workload:
      --workload  chat: sessions of the generated chat workload; gsp: SGLang's
                  generated-shared-prefix dataset, replayed like a trace
                                                          [choices: "chat", "gsp"] [default: "chat"]
      --rate      arrivals per second between bursts (gsp: conversations per second, Poisson)
                              [number] [default: 10 with --url, else --fleet-load; gsp: all at once]
      --seed      workload seed (arrivals, sessions, messages, max_tokens); the simulated fleet uses
                  it too                                                       [number] [default: 7]
      --chat      the chat workload's knobs, KEY=VALUE comma-separated: sessions=128 (conversations
                  open at once), families=16 (system prompts), zipf=1.1 (Zipf exponent of their
                  popularity, 0 uniform), system-tokens=1000-4000 (MIN-MAX tokens of a system
                  prompt), turns=4 (most turns in a session), output-tokens=48 (median max_tokens
                  (lognormal, sigma 0.5)), max-output-tokens=128 (cap on max_tokens), burst=3x3s/15s
                  (FACTORxSECONDS/PERIOD rate bursts, or off)    [array] [default: the values above]
      --gsp       with --workload gsp: SGLang bench_serving's --gsp-* knobs without the prefix,
                  KEY=VALUE comma-separated: num-groups=64 (system prompt groups),
                  prompts-per-group=16 (prompts (conversations) per group), system-prompt-len=2048
                  (system prompt tokens), question-len=128 (question tokens), output-len=256 (output
                  tokens), range-ratio=1 (lengths drawn from [L × ratio, L]), num-turns=1 (turns per
                  conversation), group-distribution=uniform (uniform or zipf), zipf-alpha (with
                  zipf: P(group g) ∝ 1/(g+1)^alpha), ordered=false (group order instead of shuffled)
                                                                 [array] [default: the values above]

Run:
      --duration       how long arrivals go on: 60s, 2m, 500ms or seconds    [string] [default: 30s]
      --grace          after --duration, how long running requests may finish before they are cut
                                                                             [string] [default: 30s]
      --warmup         leave requests sent in the first part of the run out of the figures
                                                                            [string] [default: "0s"]
      --timeout        per-request limit                                  [string] [default: "120s"]
      --model-name     model to request           [string] [default: the first one /v1/models lists]
      --max-in-flight  requests outstanding at most; arrivals beyond are shed and counted
                                                                            [number] [default: 1024]
      --json           print one JSON object on stdout, nothing else      [boolean] [default: false]

Simulated fleet:
      --sim-workers         simulated engines per configuration                [number] [default: 8]
      --sim-max-running     running-batch cap per engine                       [number] [default: 8]
      --sim-speedup         simulated time per real time (below 1: a slower model)
                                                                             [number] [default: 0.5]
      --sim-kv-blocks       KV cache blocks per engine (16 tokens each)     [number] [default: 1024]
      --sim-context-length  the model's context length per engine: a longer prompt plus output is
                            refused, and counted so                       [number] [default: 131072]
      --sim-flavor          engine API to speak      [choices: "sglang", "vllm"] [default: "sglang"]
      --fleet-load          with no --rate: mean load as a share of the fleet capacity, bursts
                            included                                         [number] [default: 0.9]

Traces and the virtual clock:
      --trace             replay a Mooncake-format trace (JSONL: timestamp ms, input_length,
                          output_length, hash_ids)                                          [string]
      --trace-block-size  tokens per hash id in the trace                    [number] [default: 512]
      --trace-speedup     replay the trace this many times faster              [number] [default: 1]
      --trace-limit       replay only the first N requests                                  [number]
      --trace-window      replay only requests from START to END seconds of trace time: START..END
                                                                                            [string]
      --clock             with --trace or --workload gsp: wall replays over HTTP to real processes
                          in real time; virtual runs the router's own code on a simulated clock, no
                          sockets                     [choices: "wall", "virtual"] [default: "wall"]
      --slo-ttft-ms       goodput counts requests whose TTFT is at most this[number] [default: 2000]

Options:
  -h, --help     Show help                                                                 [boolean]
  -V, --version  Show version number                                                       [boolean]

Examples:
  routerctl bench compare "--policy round_robin"      three configurations, 8 simulated engines each
  "--policy cache_aware" "--worker-queue-limit 6"
  routerctl bench compare "" --sweep                  what each queue limit buys, against no limit
  worker-queue-limit=2,4,6,8,12 --duration 60s
  routerctl bench compare --trace trace.jsonl         a trace through two configurations
  --clock virtual "" "--worker-queue-limit 4"
  routerctl bench compare --trace trace.jsonl         pick on windows 1-3 of the trace, check on 4-6
  --clock virtual --recommend "" --sweep
  worker-queue-limit=4,8
  routerctl bench compare --preset b2b-saas           llm-d's b2b-saas table, reproduced beside the
                                                      published figures
  routerctl bench compare "--policy round_robin" ""   for scripts
  --duration 5s --json | jq .runs[].summary.ttft_ms

Exit status: 0 when the run completed and some request succeeded, 1 when none did or a fleet failed
to start, 2 for invalid options, 130 when interrupted (the report of what ran is still printed). See
man routerctl-bench.
`,
  'bench capture': `routerctl bench capture FILE --url URL [--duration 10m] [options]

Writes what a running routerctl router serves for --duration as a Mooncake-format trace (arrivals,
sizes, prefix block ids; never text), read from its GET /admin/capture.

Positionals:
  file  the trace to write (JSONL)                                                          [string]

Capture:
      --url               the routerctl router to listen to                                 [string]
      --token             admin API bearer token (the router's --admin-token); prefer
                          ROUTERCTL_ADMIN_TOKEN           [string] [default: $ROUTERCTL_ADMIN_TOKEN]
      --duration          how long to listen: 60s, 10m, or seconds (^C stops early and keeps what
                          was seen)                                        [string] [default: "60s"]
      --trace-block-size  tokens per hash id in the trace written (a multiple of the router's
                          --block-size)                                      [number] [default: 512]
      --json              print one JSON line about the file, nothing else[boolean] [default: false]

Options:
  -h, --help     Show help                                                                 [boolean]
  -V, --version  Show version number                                                       [boolean]

Examples:
  routerctl bench capture today.jsonl --url           ten minutes of traffic
  http://127.0.0.1:30000 --duration 10m

Exit status: 0 when the capture ran its course, 1 when the router could not be read, 2 for invalid
options, 130 when interrupted (the file keeps what was seen). See man routerctl-bench.
`,
};
