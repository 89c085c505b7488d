#!/bin/bash
# The Vulkan capability shim (shim/vulkan) without a GPU: its unit tests
# against a fake libvulkan.so.1 that reproduces the real loader's
# self-reference trap (make -C shim/vulkan test; each "ok"/"not ok" of
# test-vulkan-shim is counted here), and a warning-free build of the
# library and the probe with gcc and clang.
. "$(dirname "$0")/lib.sh"

if [ "$(uname -s)" != Linux ]; then
	skip "Vulkan shim tests: the shim is for Linux (LD_PRELOAD)"
	test_done; exit $?
fi
if [ ! -f "$TOP/.llama/vulkan/prefix/usr/include/vulkan/vulkan_core.h" ]; then
	skip "Vulkan shim tests: no Vulkan headers (run make lavapipe, or sh bench/scripts/llama-bench.sh --vulkan)"
	test_done; exit $?
fi
make -s -C "$TOP/shim/vulkan" test O="$T_BUILD/shim/vulkan" >"$WORK/test" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok "vulkan shim: ${line#ok }" ;;
	"not ok "*) not_ok "vulkan shim: ${line#not ok }" ;;
	"  "*) echo "#$line" ;;
	esac
done <"$WORK/test"
if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$WORK/test"; then
	not_ok "make -C shim/vulkan test failed (exit $rc)"
	sed 's/^/# /' "$WORK/test" | tail -20
fi
grep -q '^[0-9]* passed, 0 failed$' "$WORK/test" ||
	not_ok "vulkan shim test summary missing or failing"

for cc in gcc clang; do
	if ! command -v "$cc" >/dev/null 2>&1; then
		skip "$cc is not installed"
		continue
	fi
	if make -s -C "$TOP/shim/vulkan" O="$WORK/$cc" CC="$cc" \
		WARN='-std=c11 -Wall -Wextra -Wshadow -Werror' \
		"$WORK/$cc/SHA256SUMS" >"$WORK/$cc.log" 2>&1; then
		ok "vulkan shim, $cc: zero warnings"
	else
		not_ok "vulkan shim, $cc: warnings or errors"
		grep -E 'warning|error' "$WORK/$cc.log" | head -20 | sed 's/^/# /'
	fi
done
# The library must not pull in the loader itself (it dlopens it lazily)
# and exports only the Vulkan entry points it answers and its state.
so=$T_BUILD/shim/vulkan/libVulkanCapabilities.so
if readelf -d "$so" | grep NEEDED | grep -q vulkan; then
	not_ok "the shim links libvulkan"
else
	ok "the shim does not link libvulkan"
fi
exports=$(nm -D --defined-only "$so" | awk '{ print $3 }' | sort | tr '\n' ' ')
want="vkCreateDevice vkEnumerateDeviceExtensionProperties vkGetInstanceProcAddr vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceProperties vkGetPhysicalDeviceProperties2 vulkan_capabilities_config vulkan_capabilities_status "
[ "$exports" = "$want" ] && ok "exports exactly the hooked entry points and the state" ||
	not_ok "exports: $exports"
test_done
