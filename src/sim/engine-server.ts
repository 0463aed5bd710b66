import { createTrackedServer } from '../net/index.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { bindError } from '../errors/index.js';
import { sendError } from './http/responses.js';
import { RequestValidationError } from './routes/generation-request.js';
import { chatCompletions, completions } from './routes/openai-routes.js';
import { generate } from './routes/generate-route.js';
import { getLoad, v1Loads, vllmLoad } from './routes/load-routes.js';
import { flushCache, health, healthGenerate, kvEventSources, models, serverInfo } from './routes/info-routes.js';
import { metrics } from './routes/metrics-route.js';
import { getSimConfig, putSimConfig, putSimLoad, putSimPush } from './routes/control-routes.js';
import type { RouteContext, RouteHandler } from './routes/route-context.js';
import type { SimEngine } from './sim-engine.js';

type RouteTable = Map<string, Map<string, RouteHandler>>;

function table(entries: Array<[string, string[], RouteHandler]>): RouteTable {
  const t: RouteTable = new Map();
  for (const [path, methods, handler] of entries) {
    const byMethod = t.get(path) ?? new Map<string, RouteHandler>();
    for (const m of methods) byMethod.set(m, handler);
    t.set(path, byMethod);
  }
  return t;
}

const COMMON: Array<[string, string[], RouteHandler]> = [
  ['/v1/chat/completions', ['POST'], chatCompletions],
  ['/v1/completions', ['POST'], completions],
  ['/v1/models', ['GET'], models],
  ['/health', ['GET'], health],
  ['/metrics', ['GET'], metrics],
  ['/sim/load', ['PUT'], putSimLoad],
  ['/sim/config', ['PUT'], putSimConfig],
  ['/sim/config', ['GET'], getSimConfig],
  ['/sim/push', ['PUT'], putSimPush],
];

const SGLANG_ROUTES = table([
  ...COMMON,
  ['/generate', ['POST', 'PUT'], generate],
  ['/health_generate', ['GET'], healthGenerate],
  ['/v1/loads', ['GET'], v1Loads],
  ['/get_load', ['GET'], getLoad],
  ['/server_info', ['GET'], serverInfo],
  ['/get_server_info', ['GET'], serverInfo],
  ['/flush_cache', ['GET', 'POST'], flushCache],
]);

const VLLM_ROUTES = table([
  ...COMMON,
  ['/load', ['GET'], vllmLoad],
  ['/ping', ['GET', 'POST'], health],
  ['/kv_event_sources', ['GET'], kvEventSources],
]);

export interface EngineServerOptions {
  maxBodyBytes?: number;
}

/** One simulated engine on its own HTTP port, speaking its flavour's API. */
export class EngineServer {
  readonly engine: SimEngine;
  private readonly server: Server;
  private readonly routes: RouteTable;
  private readonly ctx: RouteContext;
  private readonly sockets: Set<Socket>;
  private address: AddressInfo | undefined;

  constructor(engine: SimEngine, opts: EngineServerOptions = {}) {
    this.engine = engine;
    this.routes = engine.flavor === 'vllm' ? VLLM_ROUTES : SGLANG_ROUTES;
    this.ctx = { engine, maxBodyBytes: opts.maxBodyBytes ?? 32 * 1024 * 1024 };
    ({ server: this.server, sockets: this.sockets } = createTrackedServer((req, res) => this.dispatch(req, res), 30_000));
  }

  get url(): string {
    if (!this.address) throw new Error('engine server is not listening');
    const host = this.address.family === 'IPv6' ? `[${this.address.address}]` : this.address.address;
    return `http://${host}:${this.address.port}`;
  }

  listen(host: string, port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(bindError(host, port, err));
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        this.address = this.server.address() as AddressInfo;
        resolve(this.url);
      });
    });
  }

  /** Stop the engine and close every socket, idle or not. */
  close(): Promise<void> {
    this.engine.close();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }

  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://engine');
    const byMethod = this.routes.get(url.pathname);
    const flavor = this.engine.flavor;
    if (!byMethod) {
      sendError(res, flavor, true, 404, 'Not Found');
      return;
    }
    const handler = byMethod.get(req.method ?? 'GET');
    if (!handler) {
      sendError(res, flavor, true, 405, 'Method Not Allowed', { allow: [...byMethod.keys()].join(', ') });
      return;
    }
    const native = !url.pathname.startsWith('/v1/');
    try {
      const done = handler(req, res, url, this.ctx);
      if (done) done.catch((err: unknown) => this.fail(res, native, err));
    } catch (err) {
      this.fail(res, native, err);
    }
  }

  private fail(res: ServerResponse, native: boolean, err: unknown): void {
    if (err instanceof RequestValidationError) {
      sendError(res, this.engine.flavor, native, err.status, err.message);
      return;
    }
    sendError(res, this.engine.flavor, native, 500, `internal error: ${(err as Error)?.message ?? String(err)}`);
  }
}
