#define _POSIX_C_SOURCE 200809L
#include "analysis/captable.h"
#include "analysis/report.h"
#include "analysis/table.h"
#include "base/util.h"

#include <string.h>

/* ---- the table ---------------------------------------------------------- */

/* Every cell of the report in table order: bare, stock, shim, others. */
static const struct rep_cell *
nth_cell(const struct rep_workload *w, size_t k)
{
	return k == 0 ? &w->host : k == 1 ? &w->stock : k == 2 ? &w->shim :
		&w->others[k - 3];
}

void
capfacts_table(const struct report *r, struct table *t)
{
	static const char *const cols[] = {
		"Variant", "Role", "Median t/s", "Capabilities reported",
	};
	char **seen = xcalloc(1, sizeof(char *));
	size_t nseen = 0, i, j, k, i2, k2;
	int labels = 0, any = 0;

	table_init(t, ARRAY_SIZE(cols), cols);
	for (i = 1; i < r->n; i++)
		labels |= strcmp(r->w[i].label, r->w[0].label) != 0;
	for (i = 0; i < r->n; i++)
		for (k = 0; k < 3 + r->w[i].nothers; k++) {
			const struct rep_cell *c = nth_cell(&r->w[i], k);
			struct buf speed = BUF_INIT;
			const char *row[4];
			const char *facts = NULL;

			if (!c->variant)
				continue;
			for (j = 0; j < nseen && strcmp(seen[j], c->variant); j++)
				;
			if (j < nseen)
				continue;
			seen = strv_push(seen, &nseen, xstrdup(c->variant));
			/* the variant's speed in every workload, its facts
			 * from the first that has them */
			for (i2 = i; i2 < r->n; i2++)
				for (k2 = 0; k2 < 3 + r->w[i2].nothers; k2++) {
					const struct rep_cell *d =
						nth_cell(&r->w[i2], k2);

					if (!d->variant ||
					    strcmp(d->variant, c->variant))
						continue;
					if (!facts && d->facts)
						facts = d->facts;
					if (!d->sum.n)
						continue;
					buf_addf(&speed, "%s%s%s%s %.2f",
						 speed.len ? "; " : "",
						 labels ? r->w[i2].label : "",
						 labels ? " " : "",
						 r->w[i2].test, d->sum.median);
				}
			any |= facts != NULL;
			row[0] = c->variant;
			row[1] = c->role;
			row[2] = speed.len ? speed.buf : "–";
			row[3] = facts ? facts : "(none recorded)";
			table_add_row(t, row);
			buf_release(&speed);
		}
	strv_free(seen);
	if (!any) {
		table_release(t);
		table_init(t, ARRAY_SIZE(cols), cols);
	}
}
