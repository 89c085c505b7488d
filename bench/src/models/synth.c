#define _POSIX_C_SOURCE 200809L
#include "models/synth.h"
#include "models/gguf.h"
#include "base/files.h"
#include "base/rng.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The shapes. tinyllama-1.1b is TinyLlama 1.1B's tensor set exactly (so
 * llama-quantize gives the real Q4_K_M file's model_size); gemma3-12b is
 * Gemma 3 12B's (tied output, as in its GGUF files). All row lengths are
 * multiples of 256 so every k-quant applies.
 */
static const struct synth_shape shapes[] = {
	{ "tiny", "llama", "2-layer llama, 2.6M parameters, for tests",
	  2048, 2048, 256, 2, 4, 2, 64, 768, 1e-5f, 10000.0f, 0, 0 },
	{ "tiny-gemma3", "gemma3", "2-layer gemma3, for tests",
	  2048, 2048, 256, 2, 4, 2, 64, 768, 1e-6f, 10000.0f, 512, 1 },
	{ "tinyllama-1.1b", "llama", "TinyLlama 1.1B's tensor set",
	  32000, 2048, 2048, 22, 32, 4, 64, 5632, 1e-5f, 10000.0f, 0, 0 },
	{ "gemma3-12b", "gemma3", "Gemma 3 12B's tensor set (48 layers)",
	  262208, 131072, 3840, 48, 16, 8, 256, 15360, 1e-6f, 1000000.0f,
	  1024, 1 },
};

const struct synth_shape *
synth_shapes(size_t *n)
{
	*n = ARRAY_SIZE(shapes);
	return shapes;
}

const struct synth_shape *
synth_shape_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(shapes); i++)
		if (!strcmp(shapes[i].name, name))
			return &shapes[i];
	return NULL;
}

/* Tensor types the generator writes itself: F32, F16, Q8_0. */
static int
synth_type_ok(int t)
{
	return t == GGML_F32 || t == GGML_F16 || t == GGML_Q8_0;
}

struct tinfo {
	char name[GGUF_MAX_NAME];
	uint32_t n_dims;
	int64_t ne[2];
	int type;
	uint64_t nbytes, offset;
};

struct tlist {
	struct tinfo *t;
	size_t n, alloc;
};

static void
add_tensor(struct tlist *l, int type, int64_t ne0, int64_t ne1,
	   const char *fmt, int layer)
{
	struct tinfo *t;
	uint32_t blck = 1, size = 4;

	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		l->t = xrealloc(l->t, l->alloc * sizeof(*l->t));
	}
	t = &l->t[l->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), fmt, layer);
	t->n_dims = ne1 ? 2 : 1;
	t->ne[0] = ne0;
	t->ne[1] = ne1 ? ne1 : 1;
	t->type = ne1 ? type : GGML_F32;    /* norms stay F32 */
	ggml_type_traits(t->type, &blck, &size);
	t->nbytes = (uint64_t)(ne0 / blck) * size * (uint64_t)t->ne[1];
}

/* The tensors of a shape, in the order they are written. */
static void
build_tensors(const struct synth_shape *s, int type, struct tlist *l)
{
	int64_t e = s->n_embd, q = (int64_t)s->n_head * s->head_dim;
	int64_t kv = (int64_t)s->n_head_kv * s->head_dim, ff = s->n_ff;
	int gemma = !strcmp(s->arch, "gemma3");
	uint32_t i;

	add_tensor(l, type, e, s->n_vocab, "token_embd.weight", 0);
	for (i = 0; i < s->n_layer; i++) {
		int b = (int)i;

		add_tensor(l, type, e, 0, "blk.%d.attn_norm.weight", b);
		add_tensor(l, type, e, q, "blk.%d.attn_q.weight", b);
		add_tensor(l, type, e, kv, "blk.%d.attn_k.weight", b);
		add_tensor(l, type, e, kv, "blk.%d.attn_v.weight", b);
		add_tensor(l, type, q, e, "blk.%d.attn_output.weight", b);
		if (gemma) {
			add_tensor(l, type, s->head_dim, 0,
				   "blk.%d.attn_q_norm.weight", b);
			add_tensor(l, type, s->head_dim, 0,
				   "blk.%d.attn_k_norm.weight", b);
			add_tensor(l, type, e, 0,
				   "blk.%d.post_attention_norm.weight", b);
		}
		add_tensor(l, type, e, 0, "blk.%d.ffn_norm.weight", b);
		add_tensor(l, type, e, ff, "blk.%d.ffn_gate.weight", b);
		add_tensor(l, type, e, ff, "blk.%d.ffn_up.weight", b);
		add_tensor(l, type, ff, e, "blk.%d.ffn_down.weight", b);
		if (gemma)
			add_tensor(l, type, e, 0,
				   "blk.%d.post_ffw_norm.weight", b);
	}
	add_tensor(l, type, e, 0, "output_norm.weight", 0);
	if (!s->tied_output)
		add_tensor(l, type, e, s->n_vocab, "output.weight", 0);
}

void
synth_expect(const struct synth_shape *s, int type, uint64_t *n_params,
	     uint64_t *model_size)
{
	struct tlist l = { 0 };
	size_t i;

	build_tensors(s, type, &l);
	*n_params = *model_size = 0;
	for (i = 0; i < l.n; i++) {
		*n_params += (uint64_t)l.t[i].ne[0] * (uint64_t)l.t[i].ne[1];
		*model_size += l.t[i].nbytes;
	}
	free(l.t);
}

static int
file_type_of(int type)
{
	return type == GGML_F32 ? 0 : type == GGML_F16 ? 1 : 7;
}

static void
build_header(const struct synth_shape *s, int type, uint64_t seed,
	     struct tlist *l, struct buf *h)
{
	struct buf k = BUF_INIT;
	const char *a = s->arch;
	uint32_t n_kv = 0;
	size_t i, count_at;
	uint64_t off = 0;

#define KEY(fmt) (buf_reset(&k), buf_addf(&k, fmt, a), n_kv++, k.buf)
#define PLAIN(key) (n_kv++, key)
	buf_add(h, GGUF_MAGIC, 4);
	gguf_put_u32(h, GGUF_VERSION);
	gguf_put_u64(h, l->n);
	count_at = h->len;
	gguf_put_u64(h, 0);             /* key count, patched below */

	gguf_put_kv_str(h, PLAIN("general.architecture"), a);
	buf_reset(&k);
	buf_addf(&k, "shimbench synthetic %s seed %" PRIu64, s->name, seed);
	{
		char *name = buf_detach(&k, NULL);
		gguf_put_kv_str(h, "general.name", name);
		n_kv++;
		free(name);
	}
	gguf_put_kv_u32(h, PLAIN("general.file_type"), file_type_of(type));
	gguf_put_kv_u32(h, PLAIN("general.quantization_version"), 2);
	gguf_put_kv_u32(h, KEY("%s.vocab_size"), s->n_vocab);
	gguf_put_kv_u32(h, KEY("%s.context_length"), s->n_ctx);
	gguf_put_kv_u32(h, KEY("%s.embedding_length"), s->n_embd);
	gguf_put_kv_u32(h, KEY("%s.block_count"), s->n_layer);
	gguf_put_kv_u32(h, KEY("%s.feed_forward_length"), s->n_ff);
	gguf_put_kv_u32(h, KEY("%s.attention.head_count"), s->n_head);
	gguf_put_kv_u32(h, KEY("%s.attention.head_count_kv"), s->n_head_kv);
	gguf_put_kv_u32(h, KEY("%s.attention.key_length"), s->head_dim);
	gguf_put_kv_u32(h, KEY("%s.attention.value_length"), s->head_dim);
	gguf_put_kv_f32(h, KEY("%s.attention.layer_norm_rms_epsilon"),
			s->rms_eps);
	gguf_put_kv_u32(h, KEY("%s.rope.dimension_count"), s->head_dim);
	gguf_put_kv_f32(h, KEY("%s.rope.freq_base"), s->rope_base);
	if (s->sliding_window)
		gguf_put_kv_u32(h, KEY("%s.attention.sliding_window"),
				s->sliding_window);
	gguf_put_kv_str(h, PLAIN("tokenizer.ggml.model"), "no_vocab");
#undef KEY
#undef PLAIN
	for (i = 0; i < 8; i++)
		h->buf[count_at + i] = (char)((uint64_t)n_kv >> (8 * i));

	for (i = 0; i < l->n; i++) {
		struct tinfo *t = &l->t[i];
		uint32_t d;

		gguf_put_str(h, t->name);
		gguf_put_u32(h, t->n_dims);
		for (d = 0; d < t->n_dims; d++)
			gguf_put_u64(h, (uint64_t)t->ne[d]);
		gguf_put_u32(h, (uint32_t)t->type);
		t->offset = off;
		gguf_put_u64(h, off);
		off += (t->nbytes + GGUF_DEFAULT_ALIGNMENT - 1) /
			GGUF_DEFAULT_ALIGNMENT * GGUF_DEFAULT_ALIGNMENT;
	}
	while (h->len % GGUF_DEFAULT_ALIGNMENT)
		buf_addch(h, 0);
	buf_release(&k);
}

/* IEEE binary32 bits to binary16 bits, round to nearest even. */
static uint16_t
f32_to_f16(uint32_t x)
{
	uint32_t sign = (x >> 16) & 0x8000, mant = x & 0x7fffff, h, rem;
	int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;

	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		uint32_t shift = (uint32_t)(14 - exp), half;

		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		h = mant >> shift;
		rem = mant & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	h = ((uint32_t)exp << 10) | (mant >> 13);
	rem = mant & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

/*
 * Bits of the binary32 value n * 2^-e for |n| < 2^24, e small, built
 * from integers alone (no floating-point arithmetic, so no rounding
 * mode or precision can change the bytes).
 */
static uint32_t
int_scaled_f32(int32_t n, int e)
{
	uint32_t sign = n < 0 ? 0x80000000u : 0, m = n < 0 ? (uint32_t)-n :
		(uint32_t)n;
	int p;

	if (m == 0)
		return sign;
	p = 31 - __builtin_clz(m);
	/* m = 1.xxx * 2^p; value exponent p - e, mantissa exact (p < 24). */
	return sign | ((uint32_t)(p - e + 127) << 23) |
		((m << (23 - p)) & 0x7fffff);
}

/* Weights of a row of length n lie in ±2^-k, k = ceil(log2(n) / 2). */
static int
scale_exp(int64_t n)
{
	int lg = 0;

	while (((int64_t)1 << lg) < n)
		lg++;
	return (lg + 1) / 2;
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/*
 * Fills out with the next n bytes of tensor t's data, for elements
 * starting at element index elem (a multiple of 32 for q8_0, even
 * otherwise); rng is the tensor's generator state.
 */
static size_t
gen_chunk(const struct tinfo *t, uint64_t *rng, uint64_t n_elem,
	  unsigned char *out)
{
	int k = scale_exp(t->ne[0]);
	unsigned char *p = out;
	uint64_t i;

	if (t->n_dims == 1) {             /* norm weights: 1.0 */
		for (i = 0; i < n_elem; i++, p += 4)
			put32(p, 0x3f800000u);
		return (size_t)(p - out);
	}
	if (t->type == GGML_Q8_0) {
		/* d = 2^-(k+7) so |d*q| < 2^-k; q uniform-ish in ±127. */
		uint16_t d = f32_to_f16(int_scaled_f32(1, k + 7));
		for (i = 0; i < n_elem; i += 32) {
			int j;
			*p++ = (unsigned char)d;
			*p++ = (unsigned char)(d >> 8);
			for (j = 0; j < 32; j += 8) {
				uint64_t r = splitmix64(rng);
				int b;
				for (b = 0; b < 8; b++)
					*p++ = (unsigned char)(int8_t)
						((int)((r >> (8 * b)) & 0xff)
						 % 255 - 127);
			}
		}
		return (size_t)(p - out);
	}
	for (i = 0; i < n_elem; i += 2) {
		uint64_t r = splitmix64(rng);
		int32_t a = (int32_t)(r >> 40) - (1 << 23);
		int32_t b = (int32_t)((r >> 16) & 0xffffff) - (1 << 23);
		uint32_t fa = int_scaled_f32(a, 23 + k);
		uint32_t fb = int_scaled_f32(b, 23 + k);

		if (t->type == GGML_F32) {
			put32(p, fa);
			put32(p + 4, fb);
			p += 8;
		} else {
			uint16_t ha = f32_to_f16(fa), hb = f32_to_f16(fb);
			p[0] = (unsigned char)ha;
			p[1] = (unsigned char)(ha >> 8);
			p[2] = (unsigned char)hb;
			p[3] = (unsigned char)(hb >> 8);
			p += 4;
		}
	}
	return (size_t)(p - out);
}

int
synth_write(const char *path, const struct synth_shape *s, int type,
	    uint64_t seed, int progress)
{
	enum { CHUNK_ELEMS = 1 << 18 };   /* a multiple of 32 */
	static const unsigned char zeros[GGUF_DEFAULT_ALIGNMENT];
	struct tlist l = { 0 };
	struct buf hdr = BUF_INIT, tmp = BUF_INIT;
	unsigned char *chunk = NULL;
	uint64_t total = 0, done = 0;
	int fd = -1, ret = -1, last_pct = -1;
	size_t i;

	if (!synth_type_ok(type))
		return error("synthetic models are written as f32, f16 or "
			     "q8_0, not '%s'", ggml_type_name(type) ?
			     ggml_type_name(type) : "?");
	build_tensors(s, type, &l);
	build_header(s, type, seed, &l, &hdr);
	for (i = 0; i < l.n; i++)
		total += l.t[i].nbytes;

	buf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0) {
		error("cannot create '%s': %s", tmp.buf, strerror(errno));
		goto cleanup;
	}
	if (write_all(fd, tmp.buf, hdr.buf, hdr.len) < 0)
		goto cleanup;
	chunk = xmalloc((size_t)CHUNK_ELEMS * 4);
	for (i = 0; i < l.n; i++) {
		const struct tinfo *t = &l.t[i];
		uint64_t n = (uint64_t)t->ne[0] * (uint64_t)t->ne[1], at = 0;
		/* One independent stream per tensor: seed and index. */
		uint64_t rng = seed ^ (0xd1b54a32d192ed03ULL * (i + 1));

		while (at < n) {
			uint64_t take = n - at < CHUNK_ELEMS ? n - at :
				CHUNK_ELEMS;
			size_t len = gen_chunk(t, &rng, take, chunk);

			if (write_all(fd, tmp.buf, chunk, len) < 0)
				goto cleanup;
			at += take;
			done += len;
			if (progress && total) {
				int pct = (int)(done * 100 / total);
				if (pct != last_pct) {
					fprintf(stderr, "\rsynth: %3d%%", pct);
					last_pct = pct;
				}
			}
		}
		if (t->nbytes % GGUF_DEFAULT_ALIGNMENT &&
		    write_all(fd, tmp.buf, zeros, GGUF_DEFAULT_ALIGNMENT -
			      t->nbytes % GGUF_DEFAULT_ALIGNMENT) < 0)
			goto cleanup;
	}
	if (progress)
		fputc('\n', stderr);
	if (close(fd) < 0) {
		fd = -1;
		error("cannot write '%s': %s", tmp.buf, strerror(errno));
		goto cleanup;
	}
	fd = -1;
	if (rename(tmp.buf, path) < 0) {
		error("cannot rename '%s' to '%s': %s", tmp.buf, path,
		      strerror(errno));
		goto cleanup;
	}
	ret = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	if (ret < 0 && tmp.len)
		unlink(tmp.buf);
	free(chunk);
	free(l.t);
	buf_release(&hdr);
	buf_release(&tmp);
	return ret;
}
