"""Generated from proto/speeltafel/v1 by scripts/gen_protos.py. Do not edit."""
