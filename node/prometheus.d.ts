// Types of polyflake/prometheus (prometheus.js): a generator's health as prom-client metrics.
import type { Counter, Gauge, Registry } from 'prom-client'
import type { MonotonicSnowflake, Snowflake, UlidGenerator, Uuid7Generator } from './index'

/**
 * Register the health metrics of `gen` (the core's `HEALTH_METRICS`: the service's /metrics
 * names and help texts) in `register` (default: prom-client's global registry); each scrape
 * takes one health snapshot. Returns the metric objects in the table's order.
 */
export function collectMetrics(
  gen: Snowflake | MonotonicSnowflake | Uuid7Generator | UlidGenerator,
  register?: Registry,
): Array<Counter | Gauge>
