#define _POSIX_C_SOURCE 200809L
#include "run/transports.h"
#include "run/transport-ops.h"
#include "base/util.h"

#include <string.h>

/* The transports: a new one is one file and one row here. */
static const struct transport *const transports[] = {
	&transport_local,
	&transport_ssh,
	&transport_lume,
	&transport_tart,
};

const struct transport *
transport_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(transports); i++)
		if (!strcmp(transports[i]->name, name))
			return transports[i];
	return NULL;
}

void
transport_names(struct buf *out)
{
	size_t i, n = ARRAY_SIZE(transports);

	for (i = 0; i < n; i++)
		buf_addf(out, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
			 transports[i]->name);
}

