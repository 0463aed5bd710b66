import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimEngine } from '../sim-engine.js';

export interface RouteContext {
  engine: SimEngine;
  maxBodyBytes: number;
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL, ctx: RouteContext) => void | Promise<void>;
