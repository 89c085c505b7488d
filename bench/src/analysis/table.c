#define _POSIX_C_SOURCE 200809L
#include "analysis/table.h"
#include "base/json.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
table_init(struct table *t, size_t ncols, const char *const *names)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->head = xcalloc(ncols, sizeof(char *));
	t->numeric = xcalloc(ncols, sizeof(int));
	t->wide = xcalloc(ncols, sizeof(int));
	for (i = 0; i < ncols; i++) {
		size_t len = strlen(names[i]);
		if (len && names[i][len - 1] == '#') {
			t->numeric[i] = 1;
			len--;
		}
		t->head[i] = xstrndup(names[i], len);
	}
}

void
table_add_row(struct table *t, const char *const *cells)
{
	size_t i;

	t->cells = xrealloc(t->cells, (t->nrows + 1) * sizeof(char **));
	t->cells[t->nrows] = xcalloc(t->ncols, sizeof(char *));
	for (i = 0; i < t->ncols; i++)
		t->cells[t->nrows][i] = xstrdup(cells[i] ? cells[i] : "");
	t->nrows++;
}

void
table_release(struct table *t)
{
	size_t r, c;

	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++)
			free(t->cells[r][c]);
		free(t->cells[r]);
	}
	for (c = 0; c < t->ncols; c++)
		free(t->head[c]);
	free(t->cells);
	free(t->head);
	free(t->numeric);
	free(t->wide);
	memset(t, 0, sizeof(*t));
}

void
table_wide_only(struct table *t, const char *name)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		if (!strcmp(t->head[c], name))
			t->wide[c] = 1;
}

static size_t md_limit = TABLE_MD_WIDTH;

size_t
table_md_width(size_t width)
{
	size_t was = md_limit;

	md_limit = width;
	return was;
}

/* Display width: UTF-8 continuation bytes do not count. */
static size_t
width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/*
 * A cell as Markdown shows it: '|' escaped as "\|", a newline as a
 * space, any other control character (ESC, a carriage return, DEL) as
 * "\xNN", so a label never reaches a file, or a terminal showing it,
 * raw (issue 21 §5).
 */
static void
md_text(struct buf *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '|')
			buf_adds(out, "\\|");
		else if (c == '\n')
			buf_addch(out, ' ');
		else if (c < 0x20 || c == 0x7f)
			buf_addf(out, "\\x%02x", c);
		else
			buf_addch(out, (char)c);
	}
}

static void
md_cell(struct buf *out, const char *s, size_t w, int right)
{
	struct buf t = BUF_INIT;
	size_t pad, i;

	md_text(&t, s);
	pad = w > width(t.buf) ? w - width(t.buf) : 0;
	buf_addch(out, ' ');
	if (right)
		for (i = 0; i < pad; i++)
			buf_addch(out, ' ');
	buf_add(out, t.buf, t.len);
	if (!right)
		for (i = 0; i < pad; i++)
			buf_addch(out, ' ');
	buf_adds(out, " |");
	buf_release(&t);
}

/* The width of a cell as md_text() writes it. */
static size_t
md_width(const char *s)
{
	struct buf t = BUF_INIT;
	size_t w;

	md_text(&t, s);
	w = width(t.buf);
	buf_release(&t);
	return w;
}

/* The width of column c in Markdown: its widest cell as md_text()
 * writes it. */
static size_t
md_col_width(const struct table *t, size_t c)
{
	size_t w = md_width(t->head[c]), r;

	if (w < 3)
		w = 3;
	for (r = 0; r < t->nrows; r++) {
		size_t cw = md_width(t->cells[r][c]);

		if (cw > w)
			w = cw;
	}
	return w;
}

/* A line: "| a | b |" is 1 + sum(w + 3). */
static size_t
md_line(const size_t *w, const int *show, size_t ncols)
{
	size_t n = 1, c;

	for (c = 0; c < ncols; c++)
		if (show[c])
			n += w[c] + 3;
	return n;
}

/* s on lines of at most about width characters, broken at spaces. */
static void
md_wrap(struct buf *out, const char *s, size_t width)
{
	size_t col = 0;

	while (*s) {
		size_t n = strcspn(s, " ");

		if (col && col + 1 + n > width) {
			buf_addch(out, '\n');
			col = 0;
		} else if (col) {
			buf_addch(out, ' ');
			col++;
		}
		buf_add(out, s, n);
		col += n;
		s += n;
		while (*s == ' ')
			s++;
	}
	buf_addch(out, '\n');
}

/* 1 when no row of column c holds a value ("" or "–" each). */
static int
md_empty(const struct table *t, size_t c)
{
	size_t r;

	for (r = 0; r < t->nrows; r++)
		if (*t->cells[r][c] && strcmp(t->cells[r][c], "–"))
			return 0;
	return 1;
}

/* Too wide for a table: one list item per row, a field per line. */
static void
md_records(const struct table *t, const int *show, struct buf *out)
{
	size_t r, c;

	for (r = 0; r < t->nrows; r++) {
		int first = 1;

		for (c = 0; c < t->ncols; c++) {
			if (!show[c])
				continue;
			buf_adds(out, first ? "- **" : "  - ");
			md_text(out, t->head[c]);
			buf_adds(out, first ? "**: " : ": ");
			md_text(out, *t->cells[r][c] ? t->cells[r][c] : "–");
			buf_addch(out, '\n');
			first = 0;
		}
	}
}

static void
md_table(const struct table *t, const size_t *w, const int *show,
	 struct buf *out)
{
	size_t r, c, i;

	buf_addch(out, '|');
	for (c = 0; c < t->ncols; c++)
		if (show[c])
			md_cell(out, t->head[c], w[c], t->numeric[c]);
	buf_adds(out, "\n|");
	for (c = 0; c < t->ncols; c++) {
		if (!show[c])
			continue;
		buf_addch(out, ' ');
		for (i = 0; i + 1 < w[c]; i++)
			buf_addch(out, '-');
		buf_adds(out, t->numeric[c] ? ":" : "-");
		buf_adds(out, " |");
	}
	buf_addch(out, '\n');
	for (r = 0; r < t->nrows; r++) {
		buf_addch(out, '|');
		for (c = 0; c < t->ncols; c++)
			if (show[c])
				md_cell(out, t->cells[r][c], w[c],
					t->numeric[c]);
		buf_addch(out, '\n');
	}
}

/*
 * Within md_limit: the wide-only columns go first, then, when a line is
 * still too long, the rows become list items. A line after says what
 * was left out.
 */
void
table_render_md(const struct table *t, struct buf *out)
{
	size_t *w = xcalloc(t->ncols + 1, sizeof(size_t)), c, hidden = 0;
	int *show = xcalloc(t->ncols + 1, sizeof(int));

	for (c = 0; c < t->ncols; c++) {
		w[c] = md_col_width(t, c);
		show[c] = 1;
	}
	if (md_limit && md_line(w, show, t->ncols) > md_limit)
		for (c = 0; c < t->ncols; c++)
			if (t->wide[c]) {
				show[c] = 0;
				hidden++;
			}
	/* then the columns that hold nothing ("–" in every row) */
	if (md_limit && md_line(w, show, t->ncols) > md_limit)
		for (c = 0; c < t->ncols; c++)
			if (show[c] && t->nrows && md_empty(t, c)) {
				show[c] = 0;
				hidden++;
			}
	if (md_limit && md_line(w, show, t->ncols) > md_limit)
		md_records(t, show, out);
	else
		md_table(t, w, show, out);
	if (hidden) {
		struct buf note = BUF_INIT;

		buf_adds(&note, "Not shown (empty, or too wide for the "
			 "terminal):");
		for (c = 0; c < t->ncols; c++)
			if (!show[c])
				buf_addf(&note, " %s%s", t->head[c],
					 --hidden ? "," : ";");
		buf_adds(&note, " `--wide` shows every column, csv and json "
			 "hold them.");
		buf_addch(out, '\n');
		md_wrap(out, note.buf, 100);
		buf_release(&note);
	}
	free(w);
	free(show);
}

/*
 * A cell a spreadsheet would run as a formula: = + - @ or a tab or
 * carriage return first, and not a plain number (a negative delta is).
 */
static int
csv_formula(const char *s)
{
	double v;

	return s[0] && strchr("=+-@\t\r", s[0]) && parse_double(s, &v) < 0;
}

/* A control character CSV must not carry raw: not a tab or newline. */
static int
csv_control(unsigned char c)
{
	return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f;
}

static int
has_control(const char *s)
{
	for (; *s; s++)
		if (csv_control((unsigned char)*s))
			return 1;
	return 0;
}

/*
 * A CSV field (RFC 4180 quoting); a control character other than a tab
 * or a newline (ESC, CR, DEL) is written as "\xNN", never raw (issue 21
 * §5): a file shown with cat must not move the cursor or recolour.
 */
static void
csv_cell(struct buf *out, const char *s)
{
	int formula = csv_formula(s);

	if (!formula && !strpbrk(s, ",\"\r\n") && !has_control(s)) {
		buf_adds(out, s);
		return;
	}
	buf_addch(out, '"');
	if (formula)
		buf_addch(out, '\'');   /* shown as text, never run */
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"')
			buf_addch(out, '"');
		if (csv_control(c))
			buf_addf(out, "\\x%02x", c);
		else
			buf_addch(out, (char)c);
	}
	buf_addch(out, '"');
}

void
table_render_csv(const struct table *t, struct buf *out)
{
	size_t r, c;

	for (c = 0; c < t->ncols; c++) {
		if (c)
			buf_addch(out, ',');
		csv_cell(out, t->head[c]);
	}
	buf_addch(out, '\n');
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			if (c)
				buf_addch(out, ',');
			csv_cell(out, t->cells[r][c]);
		}
		buf_addch(out, '\n');
	}
}

/*
 * An array of objects keyed by column name, through the JSON writer. A
 * numeric cell is a number: its text when that is a JSON number, else
 * the value it parses to; an empty one is null; one that is no number
 * stays a string (a "–" for a ratio that has no value).
 */
void
table_render_json(const struct table *t, struct buf *out)
{
	struct jw w;
	size_t r, c;
	double v;

	jw_init(&w, out, 1);
	jw_array(&w);
	for (r = 0; r < t->nrows; r++) {
		jw_object(&w);
		for (c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r][c];

			jw_key(&w, t->head[c]);
			if (t->numeric[c] && !*cell)
				jw_null(&w);
			else if (t->numeric[c] && jw_num_text(&w, cell) == 0)
				;
			else if (t->numeric[c] && parse_double(cell, &v) == 0)
				jw_num(&w, v);
			else
				jw_str(&w, cell);
		}
		jw_end(&w);
	}
	jw_end(&w);
	buf_addch(out, '\n');
}

void
html_escape(struct buf *out, const char *s)
{
	size_t left = strlen(s), n;

	for (; *s; s += n, left -= n) {
		unsigned char c = (unsigned char)*s;

		n = 1;
		switch (*s) {
		case '&': buf_adds(out, "&amp;"); continue;
		case '<': buf_adds(out, "&lt;"); continue;
		case '>': buf_adds(out, "&gt;"); continue;
		case '"': buf_adds(out, "&quot;"); continue;
		case '\'': buf_adds(out, "&#39;"); continue;
		default: break;
		}
		/* Not UTF-8, or a control character HTML forbids: U+FFFD. */
		if (c >= 0x80)
			n = json_utf8_len(s, left);
		if (!n || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
			buf_adds(out, "&#xfffd;");
			n = 1;
		} else {
			buf_add(out, s, n);
		}
	}
}

void
table_render_html(const struct table *t, struct buf *out)
{
	size_t r, c;

	buf_adds(out, "<table>\n<thead><tr>");
	for (c = 0; c < t->ncols; c++) {
		buf_adds(out, "<th>");
		html_escape(out, t->head[c]);
		buf_adds(out, "</th>");
	}
	buf_adds(out, "</tr></thead>\n<tbody>\n");
	for (r = 0; r < t->nrows; r++) {
		buf_adds(out, "<tr>");
		for (c = 0; c < t->ncols; c++) {
			buf_adds(out, t->numeric[c] ? "<td class=\"num\">" :
				 "<td>");
			html_escape(out, t->cells[r][c]);
			buf_adds(out, "</td>");
		}
		buf_adds(out, "</tr>\n");
	}
	buf_adds(out, "</tbody>\n</table>\n");
}

int
table_render(const struct table *t, const char *format, struct buf *out)
{
	if (!strcmp(format, "md") || !strcmp(format, "markdown"))
		table_render_md(t, out);
	else if (!strcmp(format, "csv"))
		table_render_csv(t, out);
	else if (!strcmp(format, "json"))
		table_render_json(t, out);
	else
		return error("unknown format '%s' (md, csv or json)", format);
	return 0;
}
