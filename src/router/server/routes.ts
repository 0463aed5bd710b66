import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROMETHEUS_CONTENT_TYPE } from '../../prometheus/index.js';
import { requireJsonContentType } from '../request/content-type.js';
import type { InferenceRoute } from '../request/inference-request.js';
import { GENERATION_ROUTES } from '../request/inference-route.js';
import type { DecisionRing } from '../state/decisions/index.js';
import type { RequestCapture } from '../state/capture/index.js';
import type { RouterMetrics } from '../metrics/index.js';
import { decisionFilter, streamState } from './admin-api.js';
import type { AdminDocuments } from './admin-documents.js';
import { streamCapture } from './admin-capture.js';
import { changeMembership } from './admin-workers.js';
import type { Membership } from '../membership/fleet-membership.js';
import type { GenerationPath } from './generation.js';
import { sendJson } from './send-json.js';

/**
 * The newest decisions an /admin/stream event carries: what a console keeps. At a few
 * thousand requests a second, every record since the last event was half a megabyte an
 * event; /admin/decisions?since= has them all (docs/decisions.md §Admin decisions).
 */
const STREAM_DECISIONS = 200;

export type RouteMethod = 'GET' | 'HEAD' | 'POST' | 'DELETE';

/** One path the router answers. */
export interface Route {
  readonly path: string;
  /** The methods it takes; OPTIONS is answered for every route. A GET route takes HEAD too (node:http leaves the body out itself). */
  readonly methods: readonly RouteMethod[];
  /** `admin`: guarded by --admin-token. */
  readonly auth: 'none' | 'admin';
  /** Set on the generation routes: counted in sgl_router_requests_total and _responses_total. */
  readonly generation?: InferenceRoute;
  readonly handler: (req: IncomingMessage, res: ServerResponse, path: string) => void | Promise<void>;
}

/** What the routes answer from: the router's parts, read at request time. */
export interface RouteSources {
  readonly generation: GenerationPath;
  readonly metrics: RouterMetrics;
  readonly decisions: DecisionRing;
  readonly capture: RequestCapture;
  readonly modelId: () => string | null;
  readonly startedAt: number;
  readonly ready: () => boolean;
  /** Workers in the routable pool now. */
  readonly poolSize: () => number;
  readonly documents: AdminDocuments;
  /** Tokens per block of the prefix index's keys (a capture's blocks are whole keys). */
  readonly keyBlockSize: () => number;
  /** Who owns the fleet, and its changes through /admin/workers. */
  readonly membership: Membership;
}

const GET: readonly RouteMethod[] = ['GET', 'HEAD'];
const POST: readonly RouteMethod[] = ['POST'];

/**
 * Every path the router answers (docs/http-edge.md), with its methods, whether the
 * admin token guards it, and its handler: the one route table, which the HTTP front
 * looks a request up in.
 */
export function routeTable(s: RouteSources): ReadonlyMap<string, Route> {
  const generation = (path: string, route: InferenceRoute): Route => ({
    path,
    methods: POST,
    auth: 'none',
    generation: route,
    handler: async (req, res, upstreamPath) => {
      requireJsonContentType(req.headers['content-type']);
      await s.generation.handle(route, upstreamPath, req, res);
    },
  });
  const get = (path: string, handler: Route['handler'], auth: Route['auth'] = 'none'): Route => ({ path, methods: GET, auth, handler });
  const routes: Route[] = [
    ...Object.entries(GENERATION_ROUTES).map(([path, route]) => generation(path, route)),
    get('/v1/models', (_req, res) => {
      const id = s.modelId();
      const data = id ? [{ id, object: 'model', created: Math.floor(s.startedAt / 1000), owned_by: 'routerctl' }] : [];
      sendJson(res, 200, { object: 'list', data });
    }),
    get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' })),
    get('/readyz', (_req, res) => {
      const pool = s.poolSize();
      if (s.ready() && pool > 0) return sendJson(res, 200, { status: 'ready', workers: pool });
      return sendJson(res, 503, { status: s.ready() ? 'no_healthy_workers' : 'draining', workers: pool });
    }),
    get('/metrics', (_req, res) => {
      const body = s.metrics.render();
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }),
    get(
      '/admin/state',
      (_req, res) => {
        // Written from its parts into one buffer (docs/metrics-and-admin.md §Admin state document).
        const body = s.documents.stateBody();
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
      },
      'admin',
    ),
    get(
      '/admin/stream',
      (req, res) =>
        streamState(
          req,
          res,
          () => s.documents.partsInSlices(),
          (since) => s.decisions.query({ since, limit: STREAM_DECISIONS }),
        ),
      'admin',
    ),
    get('/admin/decisions', (req, res) => sendJson(res, 200, s.documents.decisions(decisionFilter(req.url))), 'admin'),
    get('/admin/capture', (req, res) => streamCapture(req, res, s.capture, s.keyBlockSize()), 'admin'),
    { path: '/admin/workers', methods: ['POST', 'DELETE'], auth: 'admin', handler: (req, res) => changeMembership(req, res, s.membership) },
  ];
  return new Map(routes.map((r) => [r.path, r]));
}

/** The `Allow` header of a route: its methods and OPTIONS. */
export function allowOf(route: Route): string {
  return [...route.methods, 'OPTIONS'].join(', ');
}
