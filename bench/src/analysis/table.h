#ifndef ANALYSIS_TABLE_H
#define ANALYSIS_TABLE_H

/*
 * Tables rendered as aligned GitHub Markdown, RFC 4180 CSV, JSON (an
 * array of objects keyed by column name) or an HTML <table>. Cells are
 * strings; a column marked numeric is right-aligned in Markdown and
 * written as a JSON number (empty cells become null). Knows nothing of
 * what the tables hold: every command's tables and the report's are
 * built on it.
 */

#include <stddef.h>

struct buf;

struct table {
	size_t ncols, nrows;
	char **head;
	int *numeric;
	int *wide;       /* shown in Markdown only when the width allows */
	char ***cells;   /* nrows x ncols, owned */
};

/* Columns: names; a name ending in '#' is numeric (the '#' is dropped). */
void table_init(struct table *t, size_t ncols, const char *const *names);
/* Adds a row of ncols cells (copied; NULL is an empty cell). */
void table_add_row(struct table *t, const char *const *cells);
void table_release(struct table *t);
/*
 * Marks the column named name (if any) as one Markdown shows only under
 * table_md_width(0) (`--wide`): CSV, JSON and HTML always hold it.
 */
void table_wide_only(struct table *t, const char *name);
/*
 * The widest Markdown table a terminal shows (TABLE_MD_WIDTH unless
 * set; 0: no limit, every column). A table wider than that drops its
 * wide-only columns, then the columns no row fills ("–" in every
 * one); one still wider is written as one list item per
 * row ("- **head**: cell; ..."), each field on its own line, so no line
 * of a table is longer than the limit allows. Process-wide: commands set
 * it once from `--wide`. A line after the table names the columns left
 * out and says `--wide` shows them.
 */
#define TABLE_MD_WIDTH 160
size_t table_md_width(size_t width);   /* returns the limit it replaced */

void table_render_md(const struct table *t, struct buf *out);
void table_render_csv(const struct table *t, struct buf *out);
void table_render_json(const struct table *t, struct buf *out);
/* An HTML <table> (cells escaped; numeric cells class "num"). */
void table_render_html(const struct table *t, struct buf *out);
/* Appends s with &, <, >, " and ' escaped for HTML text and attributes. */
void html_escape(struct buf *out, const char *s);

/* format: "md", "csv" or "json"; -1 with error() for anything else. */
int table_render(const struct table *t, const char *format, struct buf *out);

#endif
