export { PROMETHEUS_CONTENT_TYPE, ExpositionWriter, labelPairs } from './exposition.js';
export type { Labels, Sample, HistogramSeries } from './exposition.js';
export { parsePrometheusText, histogramSeries, sumSamples } from './parse.js';
export type { ParsedSample, ParsedFamily, ParsedHistogram, ParseOptions } from './parse.js';
