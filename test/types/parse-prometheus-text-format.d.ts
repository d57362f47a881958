// The part of parse-prometheus-text-format's API (it ships no types) that test/metrics.test.ts uses.
declare module 'parse-prometheus-text-format' {
  export interface Sample {
    value?: string;
    labels?: Record<string, string>;
    /** Histograms: the cumulative count per upper bound (`le`). */
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface MetricFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Sample[];
  }
  function parsePrometheusTextFormat(text: string): MetricFamily[];
  export default parsePrometheusTextFormat;
}
