#ifndef RUN_ABLATE_H
#define RUN_ABLATE_H

/*
 * Capability ablation (docs/plans.md, "Capability ablation"): a plan's
 * "ablate" object names one variant that injects a capability shim
 * ("from") and what to take away from it, one thing at a time and all of
 * it at once. ablate_expand() turns it into ordinary variants of role
 * "ablation", appended to the plan's "variants": each a copy of "from"
 * whose shim configuration hides (Vulkan: VULKAN_CAPS_HIDE) or lowers
 * (Metal: LUME_METAL_APPLE_FAMILY_MAX, LUME_METAL_MAX_THREADGROUP_MEMORY)
 * that one thing, with the shim's marker for exactly that configuration,
 * the ggml lines it implies and the probe's answers adjusted, so each
 * generated run is verified for what it was asked to hide. The report's
 * ablation table (analysis/ablation.h) reads what was hidden back from
 * the runs' own marker lines, never from these names.
 */

struct json;

#define ABLATE_ROLE "ablation"

/*
 * Expands root's "ablate" member in place (the plan's JSON tree, which
 * the caller owns): appends the generated variants to "variants" and
 * removes "ablate", so the tree that remains is a plan without it. No
 * "ablate": 0, nothing changed. -1 after error() naming the bad key.
 */
int ablate_expand(struct json *root);

#endif
