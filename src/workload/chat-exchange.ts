import { request } from 'undici';
import type { Dispatcher } from 'undici';

export type Message = { role: string; content: string };

/** What one streamed chat completion saw, from the client's side. */
export interface ExchangeOutcome {
  /** HTTP status, or 0 when no response arrived (refused, reset, timed out, cut). */
  status: number;
  /** Why it failed: the router's error code, a transport code, `timeout`, `cut_at_end`, `stream_error`; undefined on success. */
  error: string | undefined;
  ttftMs: number | undefined;
  latencyMs: number;
  /** Gaps between streamed content chunks. */
  itlMs: number[];
  promptTokens: number | undefined;
  cachedTokens: number | undefined;
  completionTokens: number | undefined;
  /** The assistant's text, when the stream completed cleanly. */
  reply: string | undefined;
}

export interface ExchangeRequest {
  url: string;
  dispatcher: Dispatcher;
  model: string | undefined;
  messages: Message[];
  maxTokens: number;
  signal: AbortSignal;
}

interface StreamEvent {
  choices?: Array<{ delta?: { content?: string } }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null };
  error?: { code?: string; type?: string };
}

/**
 * One chat completion, streamed with usage so the engine's cached_tokens comes back.
 * Never throws: every failure becomes an outcome, so a bad router shows up in the
 * report instead of ending the run. The abort signal's reason (a string) names why
 * an aborted request was given up.
 */
export async function chatExchange(r: ExchangeRequest): Promise<ExchangeOutcome> {
  const started = performance.now();
  const out: ExchangeOutcome = {
    status: 0,
    error: undefined,
    ttftMs: undefined,
    latencyMs: 0,
    itlMs: [],
    promptTokens: undefined,
    cachedTokens: undefined,
    completionTokens: undefined,
    reply: undefined,
  };
  try {
    const res = await request(`${r.url}/v1/chat/completions`, {
      dispatcher: r.dispatcher,
      method: 'POST',
      signal: r.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        ...(r.model ? { model: r.model } : {}),
        messages: r.messages,
        max_tokens: r.maxTokens,
        // The workload decides output lengths; an engine that stops early would make runs differ.
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    out.status = res.statusCode;
    if (res.statusCode !== 200) {
      out.error = errorCode(await res.body.text()) ?? `http_${res.statusCode}`;
      return out;
    }
    let buffer = '';
    let content = '';
    let last = 0;
    for await (const chunk of res.body) {
      buffer += (chunk as Buffer).toString('utf8');
      if (buffer.includes('\r')) buffer = buffer.replace(/\r\n/g, '\n');
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = dataOf(event);
        if (data === undefined || data === '[DONE]') continue;
        let msg: StreamEvent;
        try {
          msg = JSON.parse(data) as StreamEvent;
        } catch {
          out.error ??= 'bad_stream';
          continue;
        }
        if (msg.error) out.error ??= msg.error.code ?? msg.error.type ?? 'stream_error';
        const delta = msg.choices?.[0]?.delta?.content;
        if (delta) {
          const t = performance.now();
          if (out.ttftMs === undefined) out.ttftMs = t - started;
          else out.itlMs.push(t - last);
          last = t;
          content += delta;
        }
        if (msg.usage) {
          out.promptTokens = msg.usage.prompt_tokens;
          out.completionTokens = msg.usage.completion_tokens;
          out.cachedTokens = msg.usage.prompt_tokens_details?.cached_tokens;
        }
      }
    }
    if (!out.error) out.reply = content;
  } catch (err) {
    out.error = r.signal.aborted ? abortCause(r.signal) : ((err as { code?: string }).code ?? 'request_failed');
  } finally {
    out.latencyMs = performance.now() - started;
  }
  return out;
}

/** The data of an SSE event (multi-line data joined), or undefined for comments and other fields. */
function dataOf(event: string): string | undefined {
  let data: string | undefined;
  for (const line of event.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const v = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === undefined ? v : `${data}\n${v}`;
  }
  return data;
}

function abortCause(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'cancelled';
}

function errorCode(body: string): string | undefined {
  try {
    const j = JSON.parse(body) as { error?: { code?: unknown } | string };
    if (typeof j.error === 'string') return undefined;
    return typeof j.error?.code === 'string' ? j.error.code : undefined;
  } catch {
    return undefined;
  }
}
