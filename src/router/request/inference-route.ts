/** The generation routes, by the body each takes: OpenAI chat, OpenAI completions, SGLang's /generate. */
export type InferenceRoute = 'chat' | 'completions' | 'generate';
