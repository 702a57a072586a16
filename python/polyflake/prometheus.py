"""Prometheus metrics for a polyflake generator (``pip install polyflake[prometheus]``).

``Collector(g)`` is a ``prometheus_client`` collector: each scrape takes one ``g.health()``
snapshot and exports the core's metric table, ``polyflake.HEALTH_METRICS`` (the same names and
help texts as the service's ``/metrics``; a counter's samples end in ``_total``)::

    from prometheus_client import REGISTRY
    from polyflake.prometheus import Collector

    REGISTRY.register(Collector(g))

``labels`` adds constant labels to every sample, so several generators can share a registry
(``Collector(orders, labels={"generator": "orders"})``).
"""

from typing import Dict, Iterator, List, Mapping, Optional, Tuple, Union

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from polyflake import (
    HEALTH_METRICS,
    MonotonicSnowflake,
    Snowflake,
    UlidGenerator,
    Uuid7Generator,
)

__all__ = ["Collector"]

_Generator = Union[Snowflake, MonotonicSnowflake, Uuid7Generator, UlidGenerator]
_FAMILIES = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily}


class Collector:
    """Exports ``HEALTH_METRICS`` from ``generator.health()`` at each scrape."""

    def __init__(self, generator: _Generator, labels: Optional[Mapping[str, str]] = None) -> None:
        self._generator = generator
        self._labels = dict(labels or {})

    def collect(self) -> Iterator[Metric]:
        """One family per metric of ``HEALTH_METRICS`` the snapshot gives, in the table's order."""
        values: Dict[str, List[Tuple[List[str], float]]] = {}
        for name, label_values, value in self._generator.health().samples():
            values.setdefault(name, []).append((label_values, value))
        extra_names, extra_values = list(self._labels), list(self._labels.values())
        for name, kind, help_text, label_names in HEALTH_METRICS:
            if name not in values:  # the lease's metrics, without a lease
                continue
            family = _FAMILIES[kind](name, help_text, labels=[*label_names, *extra_names])
            for label_values, value in values[name]:
                family.add_metric([*label_values, *extra_values], value)
            yield family

    def describe(self) -> Iterator[Metric]:
        """The families this collector may give (for the registry's duplicate check), without
        taking a snapshot."""
        extra = list(self._labels)
        for name, kind, help_text, label_names in HEALTH_METRICS:
            yield _FAMILIES[kind](name, help_text, labels=[*label_names, *extra])
