#ifndef LLAMABENCH_H
#define LLAMABENCH_H

/*
 * llama-bench's output: `-o json` arrays and `-o jsonl` lines, parsed by
 * key so that fields added, renamed or retyped across versions do not
 * matter. Every row keeps its raw JSON (unknown fields included).
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
	int64_t model_size;     /* -1 when absent */
	int64_t model_n_params; /* -1 when absent */
	long n_batch, n_ubatch, n_threads, n_gpu_layers;
	char *flash_attn;       /* "auto", "on", "off" (normalised) */
	long n_prompt, n_gen, n_depth;
	char *test_time;
	char test[64];          /* "pp512", "tg128", "pp512+tg128", "… @ d512" */
	double avg_ts;          /* as printed; not used for statistics */
	size_t n_samples;
	int64_t *samples_ns;    /* may be NULL when only samples_ts exist */
	double *samples_ts;
	char *raw_json;         /* the whole row, compact */
};

struct lb_output {
	struct lb_row *rows;
	size_t n;
	int incomplete;         /* unclosed array, cut line, or no output */
	const char *format;     /* "json", "jsonl" or "empty" */
};

/*
 * Parses llama-bench stdout. `name` (a file name) is used in errors.
 * Output cut off mid-way (an array left open after "[\n", a last jsonl
 * line cut short) keeps its complete rows and sets `incomplete`, but
 * only when every byte so far fits JSON and what follows the last row
 * is the start of another. Returns 0, or -1 with error() naming the file
 * and the byte or row for anything else: text that is not JSON, text
 * after the closing ']', an object that is not a llama-bench row (no
 * n_prompt, n_gen or samples; a key twice), an integer field that is not
 * a JSON integer in range (a string such as "0x200" included),
 * non-finite or negative values, samples_ns beyond int64, samples of
 * different lengths, or samples inconsistent with n_prompt+n_gen.
 * Release with lb_output_release() in both cases.
 */
int lb_parse(const char *data, size_t len, const char *name,
	     struct lb_output *out);
void lb_output_release(struct lb_output *out);

/* Writes llama-bench's test name for the counts into out. */
void lb_test_name(long n_prompt, long n_gen, long n_depth, char *out,
		  size_t size);

#endif
