"""Generated gRPC code; see gameai/service/protogen.py."""
