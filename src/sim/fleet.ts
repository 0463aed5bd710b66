import { RealClock } from './clock.js';
import type { Clock } from './clock.js';
import { DEFAULT_ENGINE_PARAMS } from './engine-params.js';
import type { EngineParams } from './engine-params.js';
import { EngineServer } from './engine-server.js';
import type { Flavor } from './http/responses.js';
import { SimPushPublisher } from './push-publisher.js';
import type { PushOptions } from './push-publisher.js';
import { SimEngine } from './sim-engine.js';
import type { SimTokenizer } from './sim-tokenizer.js';

export interface SimFleetOptions {
  workers: number;
  host: string;
  /** First port; engine i listens on portBase + i. 0 picks free ports. */
  portBase: number;
  flavor: Flavor;
  model: string;
  dpSize: number;
  seed: number;
  clock?: Clock;
  maxBodyBytes?: number;
  /** Any engine parameter; the rest keep their defaults. */
  params?: Partial<EngineParams>;
  /** Shorthands for the common parameters. */
  maxRunning?: number;
  kvBlocks?: number;
  blockSize?: number;
  speedup?: number;
  /**
   * The KV pool in tokens, as SGLang's --max-total-tokens: becomes whole blocks
   * (rounded down) and overrides kvBlocks.
   */
  maxTotalTokens?: number;
  /** Push channels (KV events, LoadStat) each engine publishes; none by default. */
  push?: Omit<PushOptions, 'host'>;
  /**
   * Pose as real SGLang engines (docs/simulator.md §Posing as SGLang): no `simulated`
   * marker in any JSON, SGLang's SHA-256 block hashes in the KV events. SGLang flavour only.
   */
  asSglang?: boolean;
  /** The model's tokenizer for text and chat prompts (with asSglang only); the stand-in when absent. */
  tokenizer?: SimTokenizer;
}

export const DEFAULT_SIM_MODEL = 'sim-llama-3.1-8b';

export interface SimFleet {
  readonly urls: string[];
  readonly servers: EngineServer[];
  close(): Promise<void>;
}

/**
 * Start N simulated engines, each its own HTTP server on loopback. All are listening
 * when the promise resolves; if one cannot bind, the others are closed again.
 */
export async function startSimFleet(options: Partial<SimFleetOptions> = {}): Promise<SimFleet> {
  const o: SimFleetOptions = {
    workers: 4,
    host: '127.0.0.1',
    portBase: 0,
    flavor: 'sglang',
    model: DEFAULT_SIM_MODEL,
    dpSize: 1,
    seed: 42,
    ...options,
  };
  const params: EngineParams = {
    ...DEFAULT_ENGINE_PARAMS,
    ...o.params,
    ...(o.maxRunning !== undefined ? { maxRunning: o.maxRunning } : {}),
    ...(o.kvBlocks !== undefined ? { kvBlocks: o.kvBlocks } : {}),
    ...(o.blockSize !== undefined ? { blockSize: o.blockSize } : {}),
    ...(o.speedup !== undefined ? { speedup: o.speedup } : {}),
  };
  if (o.maxTotalTokens !== undefined) params.kvBlocks = Math.floor(o.maxTotalTokens / params.blockSize);
  const clock = o.clock ?? new RealClock();
  const servers: EngineServer[] = [];
  try {
    for (let i = 0; i < o.workers; i++) {
      const engine = new SimEngine({
        flavor: o.flavor,
        model: o.model,
        dpSize: o.dpSize,
        params,
        seed: o.seed + i,
        clock,
        ...(o.maxTotalTokens !== undefined ? { maxTotalTokens: o.maxTotalTokens } : {}),
        ...(o.asSglang !== undefined ? { asSglang: o.asSglang } : {}),
        ...(o.tokenizer !== undefined ? { tokenizer: o.tokenizer } : {}),
      });
      const server = new EngineServer(engine, o.maxBodyBytes === undefined ? {} : { maxBodyBytes: o.maxBodyBytes });
      servers.push(server);
      if (o.push && (o.push.kvEvents || o.push.loadPublish)) {
        const { port, ...push } = o.push;
        // A fixed first port: engine i's range follows engine i − 1's.
        const at = port === undefined ? {} : { port: port + i * SimPushPublisher.portsPerEngine(push, o.dpSize) };
        engine.push = await SimPushPublisher.start(engine, { ...push, host: o.host, ...at });
      }
      await server.listen(o.host, o.portBase === 0 ? 0 : o.portBase + i);
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.close()));
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    urls: servers.map((s) => s.url),
    servers,
    close: () => (closing ??= Promise.all(servers.map((s) => s.close())).then(() => undefined)),
  };
}
