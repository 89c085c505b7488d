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
/*
 * The report in one sentence, from its rows: "TinyLlama 1.1B Q4_K_M:
 * 11.08× prompt, 16.36× generation with the shim; Gemma 4 12B IT QAT
 * Q4_0 7.20× / 14.54×; shim at 98.25–99.59 % of bare metal for
 * prompts." ("" when no row has a guest speedup or a percent of bare
 * metal; caller frees). analysis/headline.c.
 */
char *report_headline_sentence(const struct report *r);
/*
 * The footnote for rows that have stock and shim runs but no bare-metal
 * run while other rows have one ("† No bare-metal run of X is among the
 * sessions shown: ..."), "" when none (caller frees). The headline table
 * marks their Bare-metal cell "–†".
 */
char *report_no_host_note(const struct report *r);
/* What the values in the tables are. */
extern const char report_values_note[];

#endif
