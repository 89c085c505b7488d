#ifndef ANALYSIS_ABLATION_H
#define ANALYSIS_ABLATION_H

/*
 * The capability ablation table: per workload, what taking each
 * capability away costs, in % of bare. Its rows are the cells of role
 * "ablation" (run/ablate.h generates such variants), beside the shim
 * variant (nothing taken away) and stock for reference. What a row took
 * away is read from its runs' own shim marker ("hide=fp16",
 * "appleFamilyMax=1006": the parameters that differ from the shim
 * variant's), never from variant names. % of bare is the ratio of medians
 * row ÷ bare-metal with its 95 % bootstrap interval (plot_ratio_ci():
 * processes resampled, then samples); cost = 100 % - that. A workload
 * without a bare-metal run shows no percentages and says why.
 */

struct buf;
struct report;
struct table;

/* Whether the report holds ablation rows. */
int ablation_present(const struct report *r);

/*
 * The table, into t (table_init() here; the caller releases it): raw 0
 * formatted for people (md, html, the terminal: "62.1 % (58.0–66.3)"),
 * raw 1 one number per column (csv, json: lo and hi apart, null when
 * unknown).
 */
void ablation_table(const struct report *r, int raw, struct table *t);

/* What the table's figures are, and the workloads without bare (md). */
void ablation_notes(const struct report *r, struct buf *out);

/*
 * The table alone (report --ablation): "md", "csv", "json" or "html" (a
 * <table> and its notes). -1 with error() for another format.
 */
int ablation_render(const struct report *r, const char *format,
		    struct buf *out);

#endif
