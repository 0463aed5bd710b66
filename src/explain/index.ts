// What other areas may import from src/explain.
export { runExplain } from './run-explain.js';
export type { ExplainOptions } from './run-explain.js';
export { decisionLine, decisionStory } from './story.js';
export type { ReadingContext } from './story.js';
