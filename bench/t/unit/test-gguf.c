/*
 * The GGUF reader: facts of synthetic models, type traits, and a corpus
 * of hostile headers (every truncation, huge counts and lengths, bad
 * types, bad offsets, overlaps, duplicates, random corruption) that must
 * all give an error naming an offset and never crash. Run it under
 * `make SANITIZE=address,undefined` too (t3010 does).
 *
 * With $GGUF_CORPUS_DIR set, the hostile files are also written there
 * (one file each) for the end-to-end test to feed `models info`.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "models/gguf.h"
#include "models/synth.h"
#include "base/files.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static const char *
tmp_path(const char *name)
{
	static char p[512];

	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/shimbench-gguf-XXXXXX");
		if (!mkdtemp(tmpdir))
			die("mkdtemp failed");
	}
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	return p;
}

static void
test_synth_tiny_facts(void)
{
	const struct synth_shape *s = synth_shape_find("tiny");
	const char *path = tmp_path("tiny.gguf");
	struct gguf_file g;
	uint64_t np, ms;
	int64_t v;

	CHECK(s != NULL);
	CHECK(synth_write(path, s, GGML_F16, 0, 0) == 0);
	CHECK(gguf_read(path, &g) == 0);
	synth_expect(s, GGML_F16, &np, &ms);
	CHECK(g.version == 3);
	/* token_embd + 9 per layer + output_norm + output */
	CHECK(g.n_tensors == 1 + 9 * 2 + 2);
	CHECK(g.n_kv == 17);
	CHECK(g.alignment == 32);
	CHECK(g.data_offset % 32 == 0);
	CHECK(g.file_size == g.data_offset + g.data_size);
	CHECK(g.n_params == np);
	CHECK(g.model_size == ms);
	CHECK(g.n_params == 2622720);
	CHECK_STR(gguf_get_str(&g, "general.architecture"), "llama");
	CHECK_STR(gguf_get_str(&g, "tokenizer.ggml.model"), "no_vocab");
	CHECK(gguf_get_int(&g, "llama.vocab_size", &v) == 0 && v == 2048);
	CHECK(gguf_get_int(&g, "llama.block_count", &v) == 0 && v == 2);
	CHECK(gguf_get_int(&g, "general.file_type", &v) == 0 && v == 1);
	CHECK(gguf_find(&g, "llama.attention.layer_norm_rms_epsilon") &&
	      gguf_find(&g, "llama.attention.layer_norm_rms_epsilon")->type ==
	      GGUF_F32);
	CHECK_NEAR(gguf_find(&g, "llama.attention.layer_norm_rms_epsilon")->f,
		   1e-5, 1e-9);
	CHECK_STR(g.tensors[0].name, "token_embd.weight");
	CHECK(g.tensors[0].ne[0] == 256 && g.tensors[0].ne[1] == 2048);
	CHECK(g.tensors[0].type == GGML_F16);
	CHECK(g.tensors[0].nbytes == 256 * 2048 * 2);
	CHECK_STR(g.tensors[1].name, "blk.0.attn_norm.weight");
	CHECK(g.tensors[1].type == GGML_F32 && g.tensors[1].n_dims == 1);
	CHECK_STR(g.tensors[g.n_tensors - 1].name, "output.weight");
	gguf_free(&g);
	unlink(path);
}

/* Every generator type and shape agrees with the reader's arithmetic. */
static void
test_synth_types_and_gemma(void)
{
	static const int types[] = { GGML_F32, GGML_F16, GGML_Q8_0 };
	const char *shapes[] = { "tiny", "tiny-gemma3" };
	size_t i, j;

	for (j = 0; j < ARRAY_SIZE(shapes); j++)
		for (i = 0; i < ARRAY_SIZE(types); i++) {
			const struct synth_shape *s = synth_shape_find(shapes[j]);
			const char *path = tmp_path("t.gguf");
			struct gguf_file g;
			uint64_t np, ms;

			CHECK(synth_write(path, s, types[i], 7, 0) == 0);
			CHECK(gguf_read(path, &g) == 0);
			synth_expect(s, types[i], &np, &ms);
			CHECK(g.n_params == np);
			CHECK(g.model_size == ms);
			if (j == 1) {
				CHECK(gguf_find(&g, "gemma3.attention."
						"sliding_window") != NULL);
				/* tied output: no output.weight */
				CHECK(strcmp(g.tensors[g.n_tensors - 1].name,
					     "output_norm.weight") == 0);
			}
			gguf_free(&g);
			unlink(path);
		}
}

/* The full-size shapes' figures, computed without writing them. */
static void
test_shape_figures(void)
{
	uint64_t np, ms;

	synth_expect(synth_shape_find("tinyllama-1.1b"), GGML_F16, &np, &ms);
	CHECK(np == 1100048384ull);   /* the real TinyLlama's count */
	/* F16 weights, F32 norms (2 per layer + output_norm) */
	CHECK(ms == 2 * np + 2 * (22 * 2 + 1) * 2048ull);
	synth_expect(synth_shape_find("gemma3-12b"), GGML_F16, &np, &ms);
	CHECK(np > 11000000000ull && np < 13000000000ull);
	CHECK(synth_shape_find("gemma3-12b")->n_layer == 48);
	CHECK(synth_shape_find("nope") == NULL);
}

static void
test_type_traits(void)
{
	static const struct { int t; uint32_t blck, size; const char *name; }
	cases[] = {
		{ 0, 1, 4, "F32" }, { 1, 1, 2, "F16" }, { 2, 32, 18, "Q4_0" },
		{ 3, 32, 20, "Q4_1" }, { 6, 32, 22, "Q5_0" },
		{ 7, 32, 24, "Q5_1" }, { 8, 32, 34, "Q8_0" },
		{ 10, 256, 84, "Q2_K" }, { 11, 256, 110, "Q3_K" },
		{ 12, 256, 144, "Q4_K" }, { 13, 256, 176, "Q5_K" },
		{ 14, 256, 210, "Q6_K" }, { 15, 256, 292, "Q8_K" },
		{ 16, 256, 66, "IQ2_XXS" }, { 20, 32, 18, "IQ4_NL" },
		{ 23, 256, 136, "IQ4_XS" }, { 29, 256, 56, "IQ1_M" },
		{ 30, 1, 2, "BF16" }, { 39, 32, 17, "MXFP4" },
	};
	uint32_t b, s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		CHECK(ggml_type_traits(cases[i].t, &b, &s) == 0);
		CHECK(b == cases[i].blck && s == cases[i].size);
		CHECK_STR(ggml_type_name(cases[i].t), cases[i].name);
		CHECK(ggml_type_from_name(cases[i].name) == cases[i].t);
	}
	CHECK(ggml_type_traits(4, &b, &s) < 0);    /* removed Q4_2 */
	CHECK(ggml_type_traits(31, &b, &s) < 0);   /* removed Q4_0_4_4 */
	CHECK(ggml_type_traits(-1, &b, &s) < 0);
	CHECK(ggml_type_traits(100000, &b, &s) < 0);
	CHECK(ggml_type_from_name("q8_0") == 8);
	CHECK_STR(gguf_file_type_name(15), "Q4_K_M");
	CHECK_STR(gguf_file_type_name(2), "Q4_0");
	CHECK_STR(gguf_file_type_name(7), "Q8_0");
	CHECK_STR(gguf_file_type_name(1), "F16");
	CHECK_STR(gguf_file_type_name(32), "BF16");
	CHECK(gguf_file_type_name(5) == NULL);
	CHECK(gguf_file_type_name(-3) == NULL);
}

/*
 * A small valid file, built by hand so that every field's offset is
 * known: three keys (a string, a string array, a u32 array), alignment,
 * and two tensors.
 */
struct layout {
	size_t n_tensors, n_kv, key0_len, kv0_type, str_len, arr_type, arr_n,
		sarr_n, sarr_len0, align_val, t0_name_len, t0_ndims, t0_ne0,
		t0_ne1, t0_type, t0_off, t1_name, t1_off, hdr_end;
};

static void
build_valid(struct buf *b, struct layout *l)
{
	memset(l, 0, sizeof(*l));
	buf_add(b, "GGUF", 4);
	gguf_put_u32(b, 3);
	l->n_tensors = b->len;
	gguf_put_u64(b, 2);
	l->n_kv = b->len;
	gguf_put_u64(b, 4);
	/* general.architecture = "llama" */
	l->key0_len = b->len;
	gguf_put_str(b, "general.architecture");
	l->kv0_type = b->len;
	gguf_put_u32(b, GGUF_STRING);
	l->str_len = b->len;
	gguf_put_str(b, "llama");
	/* tokenizer.ggml.tokens = ["a", "bc"] */
	gguf_put_str(b, "tokenizer.ggml.tokens");
	gguf_put_u32(b, GGUF_ARRAY);
	gguf_put_u32(b, GGUF_STRING);
	l->sarr_n = b->len;
	gguf_put_u64(b, 2);
	l->sarr_len0 = b->len;
	gguf_put_str(b, "a");
	gguf_put_str(b, "bc");
	/* x.ids = [1, 2, 3] */
	gguf_put_str(b, "x.ids");
	gguf_put_u32(b, GGUF_ARRAY);
	l->arr_type = b->len;
	gguf_put_u32(b, GGUF_U32);
	l->arr_n = b->len;
	gguf_put_u64(b, 3);
	gguf_put_u32(b, 1);
	gguf_put_u32(b, 2);
	gguf_put_u32(b, 3);
	/* general.alignment = 64 */
	gguf_put_str(b, "general.alignment");
	gguf_put_u32(b, GGUF_U32);
	l->align_val = b->len;
	gguf_put_u32(b, 64);
	/* tensor a: F32 [32, 2] = 256 bytes at 0 */
	l->t0_name_len = b->len;
	gguf_put_str(b, "a");
	l->t0_ndims = b->len;
	gguf_put_u32(b, 2);
	l->t0_ne0 = b->len;
	gguf_put_u64(b, 32);
	l->t0_ne1 = b->len;
	gguf_put_u64(b, 2);
	l->t0_type = b->len;
	gguf_put_u32(b, GGML_F32);
	l->t0_off = b->len;
	gguf_put_u64(b, 0);
	/* tensor b: Q8_0 [64] = 68 bytes at 256 */
	l->t1_name = b->len;
	gguf_put_str(b, "b");
	gguf_put_u32(b, 1);
	gguf_put_u64(b, 64);
	gguf_put_u32(b, GGML_Q8_0);
	l->t1_off = b->len;
	gguf_put_u64(b, 256);
	l->hdr_end = b->len;
	while (b->len % 64)
		buf_addch(b, 0);
	while (b->len < l->hdr_end + (64 - l->hdr_end % 64) % 64 + 256 + 68)
		buf_addch(b, 0x5a);
}

static void
put_le(struct buf *b, size_t at, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		b->buf[at + (size_t)i] = (char)(v >> (8 * i));
}

static int corpus_n;

/*
 * Reads bytes [0, len) as a GGUF file. Returns 0 / -1 like gguf_read;
 * also saves the case into $GGUF_CORPUS_DIR when hostile.
 */
static int
read_bytes(const char *data, size_t len, int save)
{
	const char *path = tmp_path("case.gguf");
	struct gguf_file g;
	int ret;

	if (write_file_atomic(path, data, len) < 0)
		die("cannot write test file");
	error_silent++;
	ret = gguf_read(path, &g);
	error_silent--;
	if (ret == 0)
		gguf_free(&g);
	if (save && getenv("GGUF_CORPUS_DIR")) {
		char *p = xstrfmt("%s/hostile-%04d.gguf",
				  getenv("GGUF_CORPUS_DIR"), corpus_n++);
		write_file_atomic(p, data, len);
		free(p);
	}
	return ret;
}

/* Expects an error whose message names an offset and contains want. */
#define EXPECT_BAD(b, want) do { \
	CHECK(read_bytes((b)->buf, (b)->len, 1) < 0); \
	CHECK(strstr(error_last(), "offset ") != NULL); \
	if (!strstr(error_last(), (want))) { \
		printf("  message: %s\n", error_last()); \
		CHECK(strstr(error_last(), (want)) != NULL); \
	} \
} while (0)

static void
test_valid_handmade(void)
{
	struct buf b = BUF_INIT;
	struct layout l;
	struct gguf_file g;
	const char *path = tmp_path("valid.gguf");

	build_valid(&b, &l);
	CHECK(write_file_atomic(path, b.buf, b.len) == 0);
	CHECK(gguf_read(path, &g) == 0);
	CHECK(g.n_tensors == 2 && g.n_kv == 4);
	CHECK(g.alignment == 64);
	CHECK(g.data_offset == 128 || g.data_offset % 64 == 0);
	CHECK(g.n_params == 64 + 64);
	CHECK(g.model_size == 256 + 68);
	CHECK(gguf_find(&g, "tokenizer.ggml.tokens")->arr_n == 2);
	CHECK(gguf_find(&g, "tokenizer.ggml.tokens")->arr_type == GGUF_STRING);
	CHECK(gguf_find(&g, "x.ids")->arr_n == 3);
	gguf_free(&g);
	buf_release(&b);
}

static void
test_truncated_everywhere(void)
{
	struct buf b = BUF_INIT;
	struct layout l;
	size_t k;
	int bad = 0, named = 0;

	build_valid(&b, &l);
	/* Every prefix shorter than the whole file is an error. */
	for (k = 0; k < b.len; k++) {
		if (read_bytes(b.buf, k, k <= l.hdr_end + 8 && k % 4 == 0) < 0)
			bad++;
		if (strstr(error_last(), "offset "))
			named++;
	}
	CHECK(bad == (int)b.len);
	CHECK(named == (int)b.len);
	CHECK(read_bytes(b.buf, b.len, 0) == 0);
	buf_release(&b);
}

static void
test_hostile_fields(void)
{
	struct buf b = BUF_INIT;
	struct layout l;

#define CASE(patch, want) do { \
	buf_reset(&b); \
	build_valid(&b, &l); \
	patch; \
	EXPECT_BAD(&b, want); \
} while (0)
	CASE(b.buf[0] = 'X', "bad magic");
	CASE(put_le(&b, 4, 2, 4), "version 2");
	CASE(put_le(&b, 4, 0x03000000, 4), "endianness");
	CASE(put_le(&b, l.n_tensors, 1ull << 62, 8), "tensor count");
	CASE(put_le(&b, l.n_tensors, UINT64_MAX, 8), "tensor count");
	CASE(put_le(&b, l.n_kv, 1ull << 62, 8), "key-value count");
	CASE(put_le(&b, l.n_kv, 5, 8), "");          /* one pair too many */
	CASE(put_le(&b, l.key0_len, 1ull << 63, 8), "key length");
	CASE(put_le(&b, l.key0_len, 70000, 8), "key length");
	CASE(put_le(&b, l.kv0_type, 13, 4), "unknown value type 13");
	CASE(put_le(&b, l.kv0_type, UINT32_MAX, 4), "unknown value type");
	CASE(put_le(&b, l.str_len, UINT64_MAX, 8), "string value length");
	CASE(put_le(&b, l.str_len, 1ull << 40, 8), "string value length");
	CASE(b.buf[l.str_len + 8 + 2] = 0, "NUL");
	CASE(put_le(&b, l.sarr_n, 1ull << 60, 8), "strings cannot fit");
	CASE(put_le(&b, l.sarr_len0, 1ull << 50, 8), "array string");
	CASE(put_le(&b, l.arr_type, GGUF_ARRAY, 4), "invalid element type");
	CASE(put_le(&b, l.arr_type, 77, 4), "invalid element type");
	CASE(put_le(&b, l.arr_n, 1ull << 61, 8), "cannot fit");
	CASE(put_le(&b, l.arr_n, UINT64_MAX / 4 + 2, 8), "cannot fit");
	CASE(put_le(&b, l.align_val, 48, 4), "power of two");
	CASE(put_le(&b, l.align_val, 0, 4), "power of two");
	CASE(put_le(&b, l.t0_name_len, 200, 8), "tensor name length");
	CASE(put_le(&b, l.t0_ndims, 5, 4), "dimensions");
	CASE(put_le(&b, l.t0_ndims, UINT32_MAX, 4), "dimensions");
	CASE(put_le(&b, l.t0_ne0, (uint64_t)-32, 8), "negative");
	CASE(put_le(&b, l.t0_ne0, 1ull << 40, 8); put_le(&b, l.t0_ne1,
		1ull << 40, 8), "overflows");
	CASE(put_le(&b, l.t0_ne0, 1ull << 40, 8), "beyond the end");
	CASE(put_le(&b, l.t0_type, 4, 4), "unknown ggml type 4");
	CASE(put_le(&b, l.t0_type, 31, 4), "unknown ggml type 31");
	CASE(put_le(&b, l.t0_type, 0x7fffffff, 4), "unknown ggml type");
	CASE(put_le(&b, l.t0_type, GGML_Q8_0, 4), "");   /* fine: 32 % 32 */
	CASE(put_le(&b, l.t0_ne0, 33, 8), "");           /* F32: size moves */
	CASE(put_le(&b, l.t0_type, GGML_Q4_K, 4), "block size");
	CASE(put_le(&b, l.t1_off, 0, 8), "overlaps");
	CASE(put_le(&b, l.t1_off, 128, 8), "overlaps");
	CASE(put_le(&b, l.t1_off, 512, 8), "gap");
	CASE(put_le(&b, l.t1_off, UINT64_MAX - 10, 8), "gap");
	CASE(put_le(&b, l.t0_off, 64, 8), "gap");
	CASE(b.buf[l.t1_name + 8] = 'a', "duplicate tensor name 'a'");
	/* general.architecture replaced by a second x.ids */
	CASE({
		struct buf d = BUF_INIT;
		buf_add(&d, b.buf, l.key0_len);
		gguf_put_kv_str(&d, "x.ids", "dup");
		buf_add(&d, b.buf + l.str_len + 8 + 5,
			b.len - (l.str_len + 8 + 5));
		buf_reset(&b);
		buf_add(&b, d.buf, d.len);
		buf_release(&d);
	}, "duplicate key 'x.ids'");
#undef CASE
	buf_release(&b);
}

/*
 * Random corruption of the header: every outcome is acceptable except a
 * crash or a sanitizer report; an error must name an offset.
 */
static void
test_random_corruption(void)
{
	struct buf b = BUF_INIT, c = BUF_INIT;
	struct layout l;
	uint64_t x = 12345;
	int i, errors = 0, unnamed = 0;

	build_valid(&b, &l);
	for (i = 0; i < 3000; i++) {
		int flips = 1 + i % 4, f;

		buf_reset(&c);
		buf_add(&c, b.buf, b.len);
		for (f = 0; f < flips; f++) {
			size_t at;
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			at = (size_t)(x >> 33) % l.hdr_end;
			c.buf[at] = (char)(i % 3 == 0 ? 0xff : i % 3 == 1 ?
					   0 : (int)(x >> 20));
		}
		if (read_bytes(c.buf, c.len, i < 40) < 0) {
			errors++;
			if (!strstr(error_last(), "offset "))
				unnamed++;
		}
	}
	CHECK(errors > 1000);
	CHECK(unnamed == 0);
	buf_release(&b);
	buf_release(&c);
}

static void
test_not_a_file(void)
{
	struct gguf_file g;

	error_silent++;
	CHECK(gguf_read("/nonexistent/x.gguf", &g) < 0);
	CHECK(strstr(error_last(), "cannot open") != NULL);
	CHECK(gguf_read("/tmp", &g) < 0);
	error_silent--;
}

static void
cleanup_tmp(void)
{
	unlink(tmp_path("case.gguf"));
	unlink(tmp_path("valid.gguf"));
	rmdir(tmpdir);
}

static void
test_zz_cleanup(void)
{
	cleanup_tmp();
}

static const struct test_case tests[] = {
	{ "synth tiny: counts, keys, params and size", test_synth_tiny_facts },
	{ "synth types and gemma3 agree with the reader",
	  test_synth_types_and_gemma },
	{ "full-size shape figures", test_shape_figures },
	{ "ggml type traits and file type names", test_type_traits },
	{ "hand-made valid file", test_valid_handmade },
	{ "truncated at every byte", test_truncated_everywhere },
	{ "hostile fields", test_hostile_fields },
	{ "random header corruption", test_random_corruption },
	{ "not a file", test_not_a_file },
	{ "cleanup", test_zz_cleanup },
};

TEST_MAIN(tests)
