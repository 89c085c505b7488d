#ifndef TRANSPORTS_H
#define TRANSPORTS_H

/*
 * The table of transports (transports.c): one row per transport, each
 * row a struct transport (run/transport-ops.h) defined in its own
 * transport-NAME.c. A new transport is one such file and one row here.
 */

struct buf;
struct transport;

/* The row named name, or NULL. */
const struct transport *transport_find(const char *name);
/* "local, ssh, lume or tart": the names of the table, for messages. */
void transport_names(struct buf *out);

#endif
