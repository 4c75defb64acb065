"""The move server: one core called by thin gRPC and REST adapters, the registry of loaded
models and its store follower, levels of play, the web board and the metrics."""
