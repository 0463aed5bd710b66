import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually } from '../helpers/http.js';

/**
 * Streams open with headers only and send their first event with the first token
 * (docs/simulator.md §Streaming), so a client's time to the first event is the
 * engine's time to first token. The engine runs on a manual clock: no token can be
 * produced until the test moves time.
 */
let fleet: SimFleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

async function openStream(path: string, body: unknown) {
  const clock = new ManualClock();
  fleet = await startSimFleet({ workers: 1, portBase: 0, clock });
  const engine = fleet.servers[0]!.engine;
  const url = new URL(path, fleet.urls[0]);
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (text += c));
  const ended = new Promise<void>((resolve) => res.on('end', () => resolve()));
  const events = (): string[] =>
    text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));
  return { clock, engine, res, ended, events, raw: () => text };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SSE streams emit nothing before the first token', () => {
  it('chat: headers at once, then the role delta together with the first token', async () => {
    const s = await openStream('/v1/chat/completions', {
      messages: [{ role: 'user', content: 'a prompt long enough to take a visible prefill step' }],
      max_tokens: 3,
      stream: true,
    });
    expect(s.res.statusCode).toBe(200);
    expect(s.res.headers['content-type']).toBe('text/event-stream');
    expect(s.engine.inflight).toBe(1);
    await pause(30);
    expect(s.raw()).toBe('');
    // Past the arrival overhead the prefill step starts, but no token exists yet.
    s.clock.advance(1);
    await pause(30);
    expect(s.raw()).toBe('');
    s.clock.advance(10);
    const [role, first] = await eventually(async () => s.events().length >= 2 && s.events());
    expect(JSON.parse(role!)).toMatchObject({ object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant', content: '' } }] });
    expect((JSON.parse(first!) as { choices: Array<{ delta: { content: string } }> }).choices[0]!.delta.content.length).toBeGreaterThan(0);
    s.clock.runUntilIdle();
    await s.ended;
    const all = s.events();
    expect(all.at(-1)).toBe('[DONE]');
    expect(all.filter((e) => e.includes('"role"'))).toHaveLength(1);
  });

  it.each([
    ['/v1/completions', { prompt: 'complete this prompt please', max_tokens: 2, stream: true }, 'choices'],
    ['/generate', { text: 'generate from this prompt', stream: true, sampling_params: { max_new_tokens: 2, ignore_eos: true } }, 'text'],
  ])('%s: the first event carries the first token', async (path, body, key) => {
    const s = await openStream(path, body);
    expect(s.res.statusCode).toBe(200);
    await pause(30);
    s.clock.advance(1);
    await pause(30);
    expect(s.raw()).toBe('');
    s.clock.advance(10);
    const [first] = await eventually(async () => s.events().length >= 1 && s.events());
    const event = JSON.parse(first!) as Record<string, unknown>;
    expect(event).toHaveProperty(key);
    const text = key === 'text' ? (event.text as string) : (event.choices as Array<{ text: string }>)[0]!.text;
    expect(text.length).toBeGreaterThan(0);
    s.clock.runUntilIdle();
    await s.ended;
    expect(s.events().at(-1)).toBe('[DONE]');
  });
});
