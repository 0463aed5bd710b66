/**
 * The benches' chat client: one chat completion through undici, to a router or
 * straight to an engine, with the caller's `x-request-id` (so the router's decision
 * record can be looked up by it) and the engine's usage read back. Streamed requests
 * ask for usage in the last chunk (`stream_options.include_usage`), as the traffic
 * driver does; a streamed response's headers leave the engine when it accepts the
 * request, a whole response's only when it is done, which matters to a router that
 * records owners on the response's status (docs/routing.md §Recording).
 */
import { Agent, request } from 'undici';
import type { ChatMessage } from '../../src/prefix/index.js';

export interface ChatOutcome {
  status: number;
  /** The engine's usage.prompt_tokens_details.cached_tokens; undefined when it said nothing. */
  cachedTokens: number | undefined;
  promptTokens: number | undefined;
  reply: string;
  /** The router's x-router-decision header, when it sends one. */
  decisionHeader: string | undefined;
  /** performance.now() when the request was sent and when its last byte came. */
  sentAt: number;
  doneAt: number;
}

interface Usage {
  prompt_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

export class ChatClient {
  readonly agent: Agent;

  constructor(connections = 64) {
    this.agent = new Agent({ connections, keepAliveTimeout: 10_000 });
  }

  async chat(
    url: string,
    messages: ChatMessage[],
    maxTokens: number,
    o: { requestId?: string; stream?: boolean } = {},
  ): Promise<ChatOutcome> {
    const stream = o.stream ?? false;
    const sentAt = performance.now();
    const res = await request(`${url}/v1/chat/completions`, {
      dispatcher: this.agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.requestId ? { 'x-request-id': o.requestId } : {}) },
      body: JSON.stringify({
        messages,
        max_tokens: maxTokens,
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      }),
    });
    const header = res.headers['x-router-decision'];
    const out: ChatOutcome = {
      status: res.statusCode,
      cachedTokens: undefined,
      promptTokens: undefined,
      reply: '',
      decisionHeader: typeof header === 'string' ? header : undefined,
      sentAt,
      doneAt: 0,
    };
    const text = await res.body.text();
    out.doneAt = performance.now();
    if (res.statusCode !== 200) return out;
    const usage = (u: Usage | undefined): void => {
      if (!u) return;
      out.promptTokens = u.prompt_tokens;
      out.cachedTokens = u.prompt_tokens_details?.cached_tokens;
    };
    if (!stream) {
      const body = JSON.parse(text) as { usage?: Usage; choices?: Array<{ message?: { content?: string } }> };
      usage(body.usage);
      out.reply = body.choices?.[0]?.message?.content ?? '';
      return out;
    }
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '' || data === '[DONE]') continue;
      const msg = JSON.parse(data) as { usage?: Usage; choices?: Array<{ delta?: { content?: string } }> };
      out.reply += msg.choices?.[0]?.delta?.content ?? '';
      usage(msg.usage ?? undefined);
    }
    return out;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** PUT /sim/load on a simulated engine: pin its reported waiting count (null: the real one). */
export async function pinWaiting(engineUrl: string, waiting: number | null): Promise<void> {
  const res = await request(`${engineUrl}/sim/load`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ num_waiting_reqs: waiting }),
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`PUT ${engineUrl}/sim/load answered ${res.statusCode}`);
}
