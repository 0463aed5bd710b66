import { UsageCountScanner } from './usage-count-scanner.js';

const PROMPT_TOKENS = Buffer.from('"prompt_tokens"');

/** What the relay adds to a response (proxy/upstream-exchange.ts RelayExtras), structurally. */
interface Extras {
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly onChunk?: ((chunk: Buffer) => void) | undefined;
}

/**
 * The engine's own count of the prompt tokens it computed, read from the usage of a
 * response as it streams past (prompt_tokens less prompt_tokens_details.cached_tokens).
 * A prefill sample's tokens are the engine's where its usage says them: its tokenizer
 * and its cache are the ones its time was spent on, and the router's count may differ
 * from them (measured on llm-d-inference-sim: 621 routed tokens for its 424).
 */
export class EngineUsage {
  readonly #prompt = new UsageCountScanner(PROMPT_TOKENS);
  readonly #cached = new UsageCountScanner();

  /** `extras` with this watching every byte too. */
  watching(extras: Extras | undefined): Extras {
    const inner = extras?.onChunk;
    return {
      headers: extras?.headers,
      onChunk: (chunk) => {
        inner?.(chunk);
        this.#prompt.push(chunk);
        this.#cached.push(chunk);
      },
    };
  }

  /** Prompt tokens, as the usage said them; undefined when it did not. */
  prompt(): number | undefined {
    const prompt = this.#prompt.value;
    return prompt > 0 ? prompt : undefined;
  }

  /** Uncached prompt tokens, when the usage said both counts; undefined otherwise. */
  uncached(): number | undefined {
    const prompt = this.#prompt.value;
    const cached = this.#cached.value;
    return prompt >= 0 && cached >= 0 && cached <= prompt ? prompt - cached : undefined;
  }
}
