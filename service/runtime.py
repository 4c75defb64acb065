"""What both transports share in one process: settings, registry, metrics, drain state."""

from __future__ import annotations

from dataclasses import dataclass

from service.metrics import Metrics
from service.registry import Registry
from service.settings import Settings


@dataclass
class Runtime:
    settings: Settings
    registry: Registry
    metrics: Metrics
    draining: bool = False  # set at SIGTERM: readiness turns false while in-flight work ends
