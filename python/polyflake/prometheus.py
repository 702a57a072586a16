"""Prometheus metrics for polyflake generators (``pip install polyflake[prometheus]``).

``Collector(g)`` is a ``prometheus_client`` collector: each scrape takes one ``g.health()``
snapshot and exports the core's metric table, ``polyflake.HEALTH_METRICS`` (the names and help
texts of the service's ``/metrics``; a counter's samples end in ``_total``)::

    from prometheus_client import REGISTRY
    from polyflake.prometheus import Collector

    REGISTRY.register(Collector(g))

Several generators in one process share a collector (a metric name may appear only once in a
registry), each told apart by a label: ``Collector({"orders": g, "events": u}, label="generator")``.
"""

from typing import Dict, Iterator, List, Mapping, Tuple, Union

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from polyflake import HEALTH_METRICS, Snowflake, UlidGenerator, Uuid7Generator

__all__ = ["Collector"]

_Generator = Union[Snowflake, Uuid7Generator, UlidGenerator]
_FAMILIES = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily}


class Collector:
    """Exports ``HEALTH_METRICS`` from the health of one generator, or of several (a mapping
    from the value of ``label`` to the generator) at each scrape."""

    def __init__(
        self,
        generators: Union[_Generator, Mapping[str, _Generator]],
        label: str = "generator",
    ) -> None:
        if isinstance(generators, Mapping):
            self._generators = [([value], g) for value, g in generators.items()]
            self._label = [label]
        else:
            self._generators = [([], generators)]
            self._label = []

    def collect(self) -> Iterator[Metric]:
        """One family per metric of ``HEALTH_METRICS`` a snapshot gives, in the table's order."""
        values: Dict[str, List[Tuple[List[str], float]]] = {}
        for extra, g in self._generators:
            for name, label_values, value in g.health().samples():
                values.setdefault(name, []).append(([*label_values, *extra], value))
        for name, kind, help_text, label_names in HEALTH_METRICS:
            if name in values:  # the lease's metrics only with a lease
                family = _FAMILIES[kind](name, help_text, labels=[*label_names, *self._label])
                for label_values, value in values[name]:
                    family.add_metric(label_values, value)
                yield family

    def describe(self) -> Iterator[Metric]:
        """The families a scrape may give, without taking a snapshot (what a registry checks
        for duplicate names when the collector is registered)."""
        for name, kind, help_text, label_names in HEALTH_METRICS:
            yield _FAMILIES[kind](name, help_text, labels=[*label_names, *self._label])
