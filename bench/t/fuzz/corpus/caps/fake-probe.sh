#!/bin/sh
# A capability probe for the Linux tests, standing in for the shim's
# metal-capabilities: JSON on stdout saying whether the variant's injected
# library reached this process (through LD_PRELOAD).
case "${LD_PRELOAD:-}" in
*libmarker.so*) loaded=true ;;
*) loaded=false ;;
esac
printf '{"device": "fake", "supportsFamily": {"1009": %s}, "shim": {"loaded": %s}}\n' \
	"$loaded" "$loaded"
