"""Generated gRPC code; see service/protogen.py."""
