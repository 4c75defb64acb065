"""A real Ray cluster on this machine's loopback for the tests: a head and worker nodes,
each its own raylet, as ``ray start`` makes them, all on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# Ray binds a node to the machine's outward address unless told it runs clusters on one
# machine only; the tests stay on the loopback, so say so before Ray is imported (the
# variable is also what the nodes' processes inherit).
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


@contextmanager
def loopback_cluster(workers: int = 1, cpus: int = 1, connect: bool = True
                     ) -> Iterator[Any]:
    """A head and ``workers`` worker nodes of ``cpus`` CPUs each; the test process joins
    as a driver when ``connect``. Yields the ``ray.cluster_utils.Cluster``."""
    os.environ.update(LOOPBACK)
    import ray
    from ray._private import ray_constants
    from ray.cluster_utils import Cluster

    ray_constants.ENABLE_RAY_CLUSTER = False  # in case Ray was imported before
    head = {"num_cpus": cpus, "include_dashboard": False,
            "object_store_memory": 100 * 1024 * 1024}
    cluster = Cluster(initialize_head=True, connect=False, head_node_args=head)
    try:
        for _ in range(workers):
            cluster.add_node(num_cpus=cpus, object_store_memory=100 * 1024 * 1024)
        cluster.wait_for_nodes()
        if connect:
            ray.init(address=cluster.address, logging_level="WARNING",
                     log_to_driver=False)
        yield cluster
    finally:
        if connect and ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
