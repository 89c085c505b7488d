#ifndef LLAMABENCH_H
#define LLAMABENCH_H

/*
 * llama-bench's output in every format it has printed since 2023 (json,
 * jsonl, csv, md, sql), as files and as people paste them: with log
 * lines, shell prompts and quoting around the output. Rows are read by
 * key (or column name), so fields added, renamed or retyped across
 * versions do not matter; every row keeps its raw fields as JSON.
 *
 * Output that starts with '[' or '{' (what llama-bench itself writes with
 * -o json / -o jsonl) is read strictly as JSON. Any other text is scanned
 * line by line (lbscan.c): tables, CSV, SQL and JSON rows are taken,
 * log lines, prompts and other text are set aside and listed (ignored[]),
 * and anything that claims to be output but is not well formed is
 * refused, naming the file and the line.
 *
 * The readers, one concern each: llamabench.c (lb_parse's table of
 * whole-text readers, rows, configurations), lbjson.c (json, jsonl),
 * lbscan.c (the line scanner and its table of text formats: lbmd.c,
 * lbjson.c, lbcsv.c, lbsqlin.c), lbfields.c (the one table of fields).
 */

#include <stddef.h>
#include <stdint.h>

struct lb_row {
	char *build_commit;     /* "" when absent */
	long build_number;      /* -1 when absent */
	char *backends;         /* "MTL,BLAS", "CPU"; from booleans in 2024 builds */
	char *cpu_info;
	char *gpu_info;
	char *model_filename;
	char *model_type;
	int64_t model_size;     /* -1 when absent (tables: rounded, not kept) */
	int64_t model_n_params; /* -1 when absent */
	long n_batch, n_ubatch, n_threads, n_gpu_layers;  /* -1 when absent */
	char *type_k, *type_v;  /* "" when absent */
	char *flash_attn;       /* "auto", "on", "off" (normalised); "" absent */
	long n_prompt, n_gen, n_depth;
	char *test_time;
	char test[64];          /* "pp512", "tg128", "pp512+tg128", "… @ d512" */
	char test_label[64];    /* the test as printed ("pp 512" in 2023-24
				   tables); the same as test for rows of the
				   machine formats */
	double avg_ts;          /* as printed; not used for statistics */
	double stddev_ts;       /* as printed; NAN when absent */
	/*
	 * Where a spread can come from: "samples" when the row has its
	 * samples (json, jsonl), "table" when llama-bench printed only
	 * avg ± stddev (md, csv, sql): then n_samples is 0, and avg_ts is a
	 * mean, never a sample. Static text.
	 */
	const char *spread_source;
	size_t n_samples;
	int64_t *samples_ns;    /* may be NULL when only samples_ts exist */
	double *samples_ts;
	char *raw_json;         /* the whole row, compact: the JSON object, or
				   the table's / CSV's / SQL's columns */
	size_t line;            /* line of the text it starts on (1-based) */
	int block;              /* which table / array / run of the text */
	int config;             /* configuration: rows that differ only in
				   the test share it (0-based) */
};

/* Lines of a pasted text that were not output, grouped by reason. */
struct lb_ignored {
	const char *why;        /* static text: "llama.cpp or ggml log line" */
	size_t count;
	size_t first_line;      /* 1-based */
	char *example;          /* the first such line (cut to 120 bytes) */
};

struct lb_output {
	struct lb_row *rows;
	size_t n;
	/*
	 * The output was cut off or the run died: an unclosed array, a cut
	 * last line, a table header with no rows, no output at all, or a
	 * crash, abort or kill in the log lines around it.
	 */
	int incomplete;
	/* "json", "jsonl", "csv", "md", "sql"; "log" for log lines without
	 * output; "empty" for no text at all. Static text. */
	const char *format;
	char *generation;       /* what the fields say of the llama-bench
				   version, e.g. "2026 schema: integer
				   flash_attn, load_mode"; "" when unknown */
	int mixed;              /* other lines around the output */
	int crashed;            /* a crash, abort or kill message was seen */
	size_t log_lines;       /* llama.cpp / ggml log lines seen */
	size_t blocks;          /* tables, arrays or runs of output */
	size_t tables_without_build;  /* md tables with no "build:" line */
	size_t configs;         /* distinct configurations of the rows */
	struct lb_ignored *ignored;
	size_t n_ignored;
	char **unknown_fields;  /* fields no llama-bench version has (fork
				   columns, …): kept in raw_json, not read;
				   NULL-terminated, may be NULL */
	char **measurements;    /* those of them taken as measurements, not
				   configuration (a fork's avg_ttft_ms:
				   lbfields.h); NULL-terminated, may be NULL */
};

/*
 * Parses llama-bench output. `name` (a file name) is used in errors.
 * Output cut off mid-way (an array left open after "[\n", a last jsonl
 * line or table row cut short) keeps its complete rows and sets
 * `incomplete`, but only when every byte so far fits the format and what
 * follows the last row is the start of another. Returns 0, or -1 with
 * error() naming the file and the byte, line or row for anything else:
 * text that is neither llama-bench output nor llama.cpp log lines, text
 * after the closing ']', an object that is not a llama-bench row (no
 * n_prompt, n_gen or samples; a key twice), an integer field that is not
 * a JSON integer in range (a string such as "0x200" included),
 * non-finite or negative values, samples_ns beyond int64, samples of
 * different lengths, samples inconsistent with n_prompt+n_gen, a table
 * row whose cells do not match its header, a t/s cell that is not
 * "A ± B", output in two formats at once (-o md -oe json with 2>&1), or
 * a NUL byte inside output. Release with lb_output_release() in both
 * cases.
 */
int lb_parse(const char *data, size_t len, const char *name,
	     struct lb_output *out);
void lb_output_release(struct lb_output *out);

/* Writes llama-bench's test name for the counts into out. */
void lb_test_name(long n_prompt, long n_gen, long n_depth, char *out,
		  size_t size);

/*
 * Reads a test name as llama-bench prints it ("pp512", "tg 128",
 * "pp4096+tg128", "pp2048 @ d32768"); 0, or -1 when s is not one.
 */
int lb_test_parse(const char *s, long *n_prompt, long *n_gen, long *n_depth);

/*
 * The configuration of a row: its raw fields under one spelling
 * (lb_normalised: json names, flags as 0/1) without those that name or
 * measure the test (n_prompt, n_gen, n_depth, test, t/s, times,
 * samples) and without a fork's measurements, as compact JSON (caller
 * frees). Rows with equal keys differ only in the test.
 */
char *lb_config_key(const struct lb_row *row);

#endif
