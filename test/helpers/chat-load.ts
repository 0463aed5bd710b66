import OpenAI from 'openai';

/**
 * Steady chat load through a router from the official OpenAI client, three requests at
 * a time, until stopped: what a membership change must not disturb. `stop` resolves
 * with every failure seen (an empty list when every request got its answer).
 */
export function steadyChats(routerUrl: string): { done: () => number; stop: () => Promise<string[]> } {
  const client = new OpenAI({ baseURL: `${routerUrl}/v1`, apiKey: 'none', maxRetries: 0 });
  const failures: string[] = [];
  let done = 0;
  let stopped = false;
  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        const res = await client.chat.completions.create({
          model: 'sim-llama-3.1-8b',
          messages: [{ role: 'user', content: `hello ${done}` }],
          max_tokens: 8,
        });
        if (!res.choices[0]?.message) failures.push('no message');
      } catch (err) {
        failures.push((err as Error).message);
      }
      done++;
    }
  };
  const loops = [loop(), loop(), loop()];
  return {
    done: () => done,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return failures;
    },
  };
}
