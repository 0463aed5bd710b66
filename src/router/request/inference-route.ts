/** The generation routes, by the body each takes: OpenAI chat, OpenAI completions, SGLang's /generate. */
export type InferenceRoute = 'chat' | 'completions' | 'generate';

/** Each generation route's path: the HTTP front's route table and the endpoint picker both read this one. */
export const GENERATION_ROUTES: Readonly<Record<string, InferenceRoute>> = Object.freeze({
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/generate': 'generate',
});
