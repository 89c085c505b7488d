#ifndef ANALYSIS_RENDER_H
#define ANALYSIS_RENDER_H

/*
 * The report (report.h) rendered: Markdown (the tables, notes, warnings
 * and the provenance), CSV (the published results.csv columns) and JSON
 * (every cell's summary, the configuration, the provenance), and the
 * report's tables for other renderers (html.c). Tables themselves are
 * table.h.
 */

struct buf;
struct report;
struct table;

/* format: "md", "csv" or "json"; -1 with error() for anything else. */
int report_render(const struct report *r, const char *format,
		  struct buf *out);
/*
 * The headline table (bare-metal, stock, shim, ratios) and the others,
 * into t (table_init() is called here; the caller releases t).
 */
void report_headline_table(const struct report *r, struct table *t);
void report_others_table(const struct report *r, struct table *t);
/* What the values in the tables are. */
extern const char report_values_note[];

#endif
