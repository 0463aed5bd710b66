// What other areas may import from src/tui. Everything else is internal.
export { runConsole } from './run-console.js';
export type { RunConsoleOptions, RunningConsole } from './run-console.js';
export type { ChildState } from './child-state.js';

export { ConsoleApp } from './components/ConsoleApp.js';
export type { ConsoleAppProps } from './components/ConsoleApp.js';
export { Console } from './components/Console.js';
export type { ConsoleProps } from './components/Console.js';
export { Header } from './components/Header.js';
export { AlertBanner } from './components/AlertBanner.js';
export { WorkerTable } from './components/WorkerTable.js';
export { DecisionMix } from './components/DecisionMix.js';
export { DivertedHistogram } from './components/DivertedHistogram.js';
export { HistoryChart } from './components/HistoryChart.js';
export { HelpOverlay } from './components/HelpOverlay.js';
export { Footer } from './components/Footer.js';
export { LogPane } from './components/LogPane.js';
export { ChildPanel } from './components/ChildPanel.js';
export { Line } from './components/Line.js';
export type { Segment, SegmentInput, Tone } from './components/Line.js';
export { ColorContext, useColor } from './color-context.js';

export { useTerminalSize, FALLBACK_SIZE } from './hooks/use-terminal-size.js';
export type { TerminalSize } from './hooks/use-terminal-size.js';
export { useConsoleKeys } from './hooks/use-console-keys.js';
export { useHistory } from './hooks/use-history.js';
export { useAlertLatch } from './hooks/use-alert-latch.js';
export { useNow } from './hooks/use-now.js';
export { useStore, constantStore } from './hooks/use-store.js';
export type { Store } from './hooks/use-store.js';

export { planLayout, planLines } from './layout.js';
export type { LayoutInput, LayoutPlan } from './layout.js';
export { chartLines } from './chart.js';
export { RingBuffer } from './ring-buffer.js';
export { HistoryBuffers, sampleOf } from './history.js';
export type { HistorySeries, HistorySample } from './history.js';
export { reduceKey, initialUiState, activeFilter } from './keymap.js';
export type { ConsoleUiState, KeyInfo, Mode } from './keymap.js';
export { bannersFor, nextLatch, NO_LATCH } from './banners.js';
export type { AlertLatch, Banner } from './banners.js';
