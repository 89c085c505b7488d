/*
 * The configuration of the Vulkan capability shim: three environment
 * variables, parsed strictly. Anything malformed is refused as a whole
 * (the shim then answers exactly as the driver does and says why): a
 * benchmark must never run under a profile other than the one it names.
 */
#include "vkcaps.h"

#include <stdio.h>
#include <string.h>

static const char *const cap_names[] = {
	"coopmat", "coopmat2", "int-dot", "fp16", "bf16",
	"subgroup-size-control", "dot2",
};
#define NCAPS (sizeof(cap_names) / sizeof(cap_names[0]))

const char *
vkcaps_cap_name(unsigned bit)
{
	size_t i;

	for (i = 0; i < NCAPS; i++)
		if (bit == 1u << i)
			return cap_names[i];
	return NULL;
}

const char *
vkcaps_cap_names(void)
{
	return "coopmat, coopmat2, int-dot, fp16, bf16, "
	       "subgroup-size-control, dot2";
}

static int
set(const char *s)
{
	return s && *s;
}

/* Copies at most 48 printable bytes of s into out, '?' for the others. */
static void
sanitised(char *out, size_t n, const char *s, size_t len)
{
	size_t i, j = 0;

	for (i = 0; i < len && i < 48 && j + 1 < n; i++)
		out[j++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (i < len && j + 4 < n) {
		memcpy(out + j, "...", 3);
		j += 3;
	}
	out[j] = '\0';
}

/* "a,b,c" into bits; -1 with c->why on an empty or unknown name. */
static int
parse_hide(const char *s, struct vkcaps_config *c)
{
	const char *p = s;
	char name[64];

	c->hide = 0;
	for (;;) {
		size_t len = strcspn(p, ","), i;
		unsigned bit = 0;

		if (len == 0) {
			snprintf(c->why, sizeof(c->why), VKCAPS_ENV_HIDE
				 "='%.48s' has an empty name", s);
			return -1;
		}
		if (len == 3 && !memcmp(p, "all", 3))
			bit = VKCAPS_ALL;
		for (i = 0; i < NCAPS && !bit; i++)
			if (strlen(cap_names[i]) == len &&
			    !memcmp(p, cap_names[i], len))
				bit = 1u << i;
		if (!bit) {
			sanitised(name, sizeof(name), p, len);
			if (strstr(name, "16bit"))
				snprintf(c->why, sizeof(c->why),
					 VKCAPS_ENV_HIDE " names '%s': "
					 "VK_KHR_16bit_storage is never "
					 "hidden (ggml refuses a device "
					 "without it)", name);
			else
				snprintf(c->why, sizeof(c->why),
					 VKCAPS_ENV_HIDE " names '%s', not "
					 "a capability (%s, all)", name,
					 vkcaps_cap_names());
			return -1;
		}
		c->hide |= bit;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* A decimal byte count 1..UINT32_MAX, the whole string; 0 or -1. */
static int
parse_bytes(const char *s, uint32_t *out)
{
	uint64_t v = 0;
	const char *p;

	if (!*s || *s == '0')
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int
vkcaps_config_parse(const char *profile, const char *hide,
		    const char *max_shared, struct vkcaps_config *c)
{
	char shown[64];

	memset(c, 0, sizeof(*c));
	if (set(profile) && set(hide)) {
		snprintf(c->why, sizeof(c->why), VKCAPS_ENV_PROFILE " and "
			 VKCAPS_ENV_HIDE " are both set; set one of them");
		return -1;
	}
	if (set(profile)) {
		if (!strcmp(profile, "stock")) {
			c->hide = VKCAPS_ALL;
		} else if (strcmp(profile, "shim")) {
			sanitised(shown, sizeof(shown), profile,
				  strlen(profile));
			snprintf(c->why, sizeof(c->why), VKCAPS_ENV_PROFILE
				 "='%s' is not a profile (stock, shim)", shown);
			return -1;
		}
		snprintf(c->profile, sizeof(c->profile), "%s", profile);
	} else if (set(hide)) {
		if (parse_hide(hide, c) < 0)
			return -1;
		snprintf(c->profile, sizeof(c->profile), "hide");
	} else {
		snprintf(c->why, sizeof(c->why), "no configuration (set "
			 VKCAPS_ENV_PROFILE "=stock or shim, or "
			 VKCAPS_ENV_HIDE ")");
		return -1;
	}
	if (set(max_shared)) {
		if (!strcmp(c->profile, "shim")) {
			snprintf(c->why, sizeof(c->why), VKCAPS_ENV_MAX_SHARED
				 " is set, but the shim profile changes "
				 "nothing");
			c->profile[0] = '\0';
			return -1;
		}
		if (parse_bytes(max_shared, &c->max_shared) < 0) {
			sanitised(shown, sizeof(shown), max_shared,
				  strlen(max_shared));
			snprintf(c->why, sizeof(c->why), VKCAPS_ENV_MAX_SHARED
				 "='%s' is not a decimal byte count "
				 "(1-4294967295)", shown);
			c->profile[0] = '\0';
			return -1;
		}
	}
	return 0;
}

void
vkcaps_describe(const struct vkcaps_config *c, char *out, size_t n)
{
	size_t len, i;

	len = (size_t)snprintf(out, n, "profile=%s hide=", c->profile);
	if (!c->hide && len < n)
		len += (size_t)snprintf(out + len, n - len, "none");
	for (i = 0; i < NCAPS && len < n; i++)
		if (c->hide & (1u << i))
			len += (size_t)snprintf(out + len, n - len, "%s%s",
						out[len - 1] == '=' ? "" : ",",
						cap_names[i]);
	if (c->max_shared && len < n)
		snprintf(out + len, n - len, " maxSharedMemory=%u",
			 (unsigned)c->max_shared);
}
