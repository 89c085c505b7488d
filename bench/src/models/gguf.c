#define _POSIX_C_SOURCE 200809L
#include "models/gguf.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ggml type traits (ggml/src/ggml.c type_traits, ggml-common.h blocks). */
static const struct {
	const char *name;
	uint32_t blck, size;
} ggml_types[] = {
	[0] = { "F32", 1, 4 },
	[1] = { "F16", 1, 2 },
	[2] = { "Q4_0", 32, 18 },
	[3] = { "Q4_1", 32, 20 },
	[6] = { "Q5_0", 32, 22 },
	[7] = { "Q5_1", 32, 24 },
	[8] = { "Q8_0", 32, 34 },
	[9] = { "Q8_1", 32, 36 },
	[10] = { "Q2_K", 256, 84 },
	[11] = { "Q3_K", 256, 110 },
	[12] = { "Q4_K", 256, 144 },
	[13] = { "Q5_K", 256, 176 },
	[14] = { "Q6_K", 256, 210 },
	[15] = { "Q8_K", 256, 292 },
	[16] = { "IQ2_XXS", 256, 66 },
	[17] = { "IQ2_XS", 256, 74 },
	[18] = { "IQ3_XXS", 256, 98 },
	[19] = { "IQ1_S", 256, 50 },
	[20] = { "IQ4_NL", 32, 18 },
	[21] = { "IQ3_S", 256, 110 },
	[22] = { "IQ2_S", 256, 82 },
	[23] = { "IQ4_XS", 256, 136 },
	[24] = { "I8", 1, 1 },
	[25] = { "I16", 1, 2 },
	[26] = { "I32", 1, 4 },
	[27] = { "I64", 1, 8 },
	[28] = { "F64", 1, 8 },
	[29] = { "IQ1_M", 256, 56 },
	[30] = { "BF16", 1, 2 },
	[34] = { "TQ1_0", 256, 54 },
	[35] = { "TQ2_0", 256, 66 },
	[39] = { "MXFP4", 32, 17 },
	[40] = { "NVFP4", 64, 36 },
};

int
ggml_type_traits(int type, uint32_t *blck, uint32_t *size)
{
	if (type < 0 || (size_t)type >= ARRAY_SIZE(ggml_types) ||
	    !ggml_types[type].name)
		return -1;
	*blck = ggml_types[type].blck;
	*size = ggml_types[type].size;
	return 0;
}

const char *
ggml_type_name(int type)
{
	if (type < 0 || (size_t)type >= ARRAY_SIZE(ggml_types))
		return NULL;
	return ggml_types[type].name;
}

int
ggml_type_from_name(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ggml_types); i++)
		if (ggml_types[i].name && !strcasecmp(ggml_types[i].name, name))
			return (int)i;
	return -1;
}

/* llama_ftype values, named as llama-quantize accepts them. */
static const char *const file_types[] = {
	[0] = "F32", [1] = "F16", [2] = "Q4_0", [3] = "Q4_1",
	[4] = "Q4_1_SOME_F16", [7] = "Q8_0", [8] = "Q5_0", [9] = "Q5_1",
	[10] = "Q2_K", [11] = "Q3_K_S", [12] = "Q3_K_M", [13] = "Q3_K_L",
	[14] = "Q4_K_S", [15] = "Q4_K_M", [16] = "Q5_K_S", [17] = "Q5_K_M",
	[18] = "Q6_K", [19] = "IQ2_XXS", [20] = "IQ2_XS", [21] = "Q2_K_S",
	[22] = "IQ3_XS", [23] = "IQ3_XXS", [24] = "IQ1_S", [25] = "IQ4_NL",
	[26] = "IQ3_S", [27] = "IQ3_M", [28] = "IQ2_S", [29] = "IQ2_M",
	[30] = "IQ4_XS", [31] = "IQ1_M", [32] = "BF16", [36] = "TQ1_0",
	[37] = "TQ2_0", [38] = "MXFP4_MOE",
};

const char *
gguf_file_type_name(int64_t ftype)
{
	if (ftype < 0 || (uint64_t)ftype >= ARRAY_SIZE(file_types))
		return NULL;
	return file_types[ftype];
}

static const char *const vtype_names[] = {
	"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string",
	"array", "u64", "i64", "f64",
};

const char *
gguf_vtype_name(int type)
{
	if (type < 0 || (size_t)type >= ARRAY_SIZE(vtype_names))
		return "?";
	return vtype_names[type];
}

/* Bytes of one scalar of that type (0 for string/array/unknown). */
static size_t
gguf_vtype_size(int type)
{
	switch (type) {
	case GGUF_U8: case GGUF_I8: case GGUF_BOOL: return 1;
	case GGUF_U16: case GGUF_I16: return 2;
	case GGUF_U32: case GGUF_I32: case GGUF_F32: return 4;
	case GGUF_U64: case GGUF_I64: case GGUF_F64: return 8;
	default: return 0;
	}
}

/*
 * A bounded, buffered reader over a descriptor. Every read is checked
 * against the file size before anything is read or allocated.
 */
struct rd {
	int fd;
	const char *name;
	uint64_t size;         /* file size */
	uint64_t pos;          /* next offset to read */
	uint64_t bstart;       /* file offset of buf[0] */
	size_t blen;
	unsigned char buf[1 << 16];
};

static int
rd_fail(struct rd *r, uint64_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
rd_fail(struct rd *r, uint64_t at, const char *fmt, ...)
{
	struct buf msg = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	error("'%s': offset %" PRIu64 ": %s", r->name, at, msg.buf);
	buf_release(&msg);
	return -1;
}

static uint64_t
rd_left(const struct rd *r)
{
	return r->size - r->pos;
}

static int
rd_bytes(struct rd *r, void *dst, size_t n, const char *what)
{
	unsigned char *out = dst;

	if (n > rd_left(r))
		return rd_fail(r, r->pos, "truncated: %s needs %zu bytes, "
			       "%" PRIu64 " left", what, n, rd_left(r));
	while (n) {
		size_t avail, take;

		if (r->pos < r->bstart || r->pos >= r->bstart + r->blen) {
			uint64_t want = rd_left(r);
			ssize_t got;

			if (want > sizeof(r->buf))
				want = sizeof(r->buf);
			do {
				got = pread(r->fd, r->buf, (size_t)want,
					    (off_t)r->pos);
			} while (got < 0 && errno == EINTR);
			if (got < 0)
				return rd_fail(r, r->pos, "cannot read: %s",
					       strerror(errno));
			if (got == 0)
				return rd_fail(r, r->pos, "file shrank while "
					       "reading %s", what);
			r->bstart = r->pos;
			r->blen = (size_t)got;
		}
		avail = (size_t)(r->bstart + r->blen - r->pos);
		take = n < avail ? n : avail;
		memcpy(out, r->buf + (r->pos - r->bstart), take);
		out += take;
		r->pos += take;
		n -= take;
	}
	return 0;
}

static int
rd_skip(struct rd *r, uint64_t n, const char *what)
{
	if (n > rd_left(r))
		return rd_fail(r, r->pos, "truncated: %s needs %" PRIu64
			       " bytes, %" PRIu64 " left", what, n,
			       rd_left(r));
	r->pos += n;
	return 0;
}

static uint64_t
le_get(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = (v << 8) | p[n];
	return v;
}

static int
rd_u32(struct rd *r, uint32_t *v, const char *what)
{
	unsigned char b[4];

	if (rd_bytes(r, b, 4, what) < 0)
		return -1;
	*v = (uint32_t)le_get(b, 4);
	return 0;
}

static int
rd_u64(struct rd *r, uint64_t *v, const char *what)
{
	unsigned char b[8];

	if (rd_bytes(r, b, 8, what) < 0)
		return -1;
	*v = le_get(b, 8);
	return 0;
}

/*
 * Reads a GGUF string (u64 length, bytes). Keeps at most keep bytes in
 * *out (NUL-terminated, allocated) and skips the rest; a length above
 * max is an error. *len gets the full length.
 */
static int
rd_str(struct rd *r, char **out, uint64_t *len, uint64_t max, size_t keep,
       const char *what)
{
	uint64_t at = r->pos, n;
	size_t k;
	char *s;

	if (rd_u64(r, &n, what) < 0)
		return -1;
	if (n > rd_left(r))
		return rd_fail(r, at, "%s length %" PRIu64 " exceeds the "
			       "%" PRIu64 " bytes left in the file", what, n,
			       rd_left(r));
	if (n > max)
		return rd_fail(r, at, "%s length %" PRIu64 " exceeds the "
			       "limit of %" PRIu64, what, n, max);
	k = n < keep ? (size_t)n : keep;
	s = xmalloc(k + 1);
	if (rd_bytes(r, s, k, what) < 0 || rd_skip(r, n - k, what) < 0) {
		free(s);
		return -1;
	}
	s[k] = '\0';
	if (strlen(s) != k) {
		free(s);
		return rd_fail(r, at, "%s contains a NUL byte", what);
	}
	*out = s;
	if (len)
		*len = n;
	return 0;
}

static void
grow(void **p, size_t *alloc, size_t n, size_t size)
{
	if (n < *alloc)
		return;
	*alloc = *alloc ? *alloc * 2 : 16;
	*p = xrealloc(*p, *alloc * size);
}

static int
read_kv(struct rd *r, struct gguf_kv *kv)
{
	uint64_t at;
	uint32_t t;
	unsigned char b[8];
	size_t sz;

	kv->offset = r->pos;
	if (rd_str(r, &kv->key, NULL, 65535, 65535, "key") < 0)
		return -1;
	at = r->pos;
	if (rd_u32(r, &t, "value type") < 0)
		return -1;
	if (t > GGUF_F64)
		return rd_fail(r, at, "key '%s' has unknown value type %" PRIu32,
			       kv->key, t);
	kv->type = (int)t;
	if (t == GGUF_STRING)
		return rd_str(r, &kv->str, &kv->str_len, UINT64_MAX,
			      GGUF_STR_KEEP, "string value");
	if (t == GGUF_ARRAY) {
		uint32_t et;
		uint64_t n, i;

		at = r->pos;
		if (rd_u32(r, &et, "array element type") < 0)
			return -1;
		if (et > GGUF_F64 || et == GGUF_ARRAY)
			return rd_fail(r, at, "key '%s': array has invalid "
				       "element type %" PRIu32, kv->key, et);
		kv->arr_type = (int)et;
		at = r->pos;
		if (rd_u64(r, &n, "array length") < 0)
			return -1;
		kv->arr_n = n;
		if (et == GGUF_STRING) {
			if (n > rd_left(r) / 8)
				return rd_fail(r, at, "key '%s': array of %"
					       PRIu64 " strings cannot fit in "
					       "the %" PRIu64 " bytes left",
					       kv->key, n, rd_left(r));
			for (i = 0; i < n; i++) {
				uint64_t len, sat = r->pos;

				if (rd_u64(r, &len, "array string") < 0)
					return -1;
				if (len > rd_left(r))
					return rd_fail(r, sat, "key '%s': array "
						       "string %" PRIu64 " length "
						       "%" PRIu64 " exceeds the "
						       "file", kv->key, i, len);
				r->pos += len;
			}
			return 0;
		}
		sz = gguf_vtype_size((int)et);
		if (n > rd_left(r) / sz)
			return rd_fail(r, at, "key '%s': array of %" PRIu64
				       " %s cannot fit in the %" PRIu64
				       " bytes left", kv->key, n,
				       gguf_vtype_name((int)et), rd_left(r));
		return rd_skip(r, n * sz, "array");
	}
	sz = gguf_vtype_size((int)t);
	if (rd_bytes(r, b, sz, "value") < 0)
		return -1;
	kv->u = le_get(b, sz);
	switch (t) {
	case GGUF_I8: kv->i = (int8_t)kv->u; break;
	case GGUF_I16: kv->i = (int16_t)kv->u; break;
	case GGUF_I32: kv->i = (int32_t)kv->u; break;
	case GGUF_I64: kv->i = (int64_t)kv->u; break;
	case GGUF_F32: {
		uint32_t bits = (uint32_t)kv->u;
		float f;
		memcpy(&f, &bits, 4);
		kv->f = f;
		break;
	}
	case GGUF_F64: memcpy(&kv->f, &kv->u, 8); break;
	default: kv->i = (int64_t)kv->u; break;
	}
	return 0;
}

static int
read_tensor(struct rd *r, struct gguf_tensor *t)
{
	uint64_t at = r->pos, nrows, rowbytes;
	uint32_t type, blck, size, i;
	unsigned char b[8];

	if (rd_str(r, &t->name, NULL, GGUF_MAX_NAME - 1, GGUF_MAX_NAME,
		   "tensor name") < 0)
		return -1;
	at = r->pos;
	if (rd_u32(r, &t->n_dims, "tensor dimension count") < 0)
		return -1;
	if (t->n_dims > GGUF_MAX_DIMS)
		return rd_fail(r, at, "tensor '%s' has %" PRIu32 " dimensions "
			       "(at most %d)", t->name, t->n_dims,
			       GGUF_MAX_DIMS);
	for (i = 0; i < GGUF_MAX_DIMS; i++)
		t->ne[i] = 1;
	for (i = 0; i < t->n_dims; i++) {
		at = r->pos;
		if (rd_bytes(r, b, 8, "tensor dimension") < 0)
			return -1;
		t->ne[i] = (int64_t)le_get(b, 8);
		if (t->ne[i] < 0)
			return rd_fail(r, at, "tensor '%s' has negative "
				       "dimension %" PRId64, t->name, t->ne[i]);
	}
	at = r->pos;
	if (rd_u32(r, &type, "tensor type") < 0)
		return -1;
	if (ggml_type_traits((int)type, &blck, &size) < 0)
		return rd_fail(r, at, "tensor '%s' has unknown ggml type %"
			       PRIu32, t->name, type);
	t->type = (int)type;
	if (t->ne[0] % blck)
		return rd_fail(r, at, "tensor '%s': row length %" PRId64
			       " is not a multiple of %s's block size %"
			       PRIu32, t->name, t->ne[0], ggml_types[type].name,
			       blck);
	/* Overflow-checked element count and byte size. */
	t->nelements = (uint64_t)t->ne[0];
	nrows = 1;
	for (i = 1; i < GGUF_MAX_DIMS; i++) {
		if (__builtin_mul_overflow(t->nelements, (uint64_t)t->ne[i],
					   &t->nelements) ||
		    __builtin_mul_overflow(nrows, (uint64_t)t->ne[i], &nrows))
			return rd_fail(r, at, "tensor '%s': element count "
				       "overflows", t->name);
	}
	if (t->nelements > INT64_MAX)
		return rd_fail(r, at, "tensor '%s': element count overflows",
			       t->name);
	rowbytes = (uint64_t)t->ne[0] / blck * size;
	if (__builtin_mul_overflow(rowbytes, nrows, &t->nbytes))
		return rd_fail(r, at, "tensor '%s': byte size overflows",
			       t->name);
	return rd_u64(r, &t->offset, "tensor offset");
}

static int
cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Returns the first name that occurs twice among n names, or NULL. */
static const char *
find_duplicate(char **names, size_t n)
{
	const char *dup = NULL;
	char **sorted;
	size_t i;

	if (n < 2)
		return NULL;
	sorted = xmalloc(n * sizeof(*sorted));
	memcpy(sorted, names, n * sizeof(*sorted));
	xqsort(sorted, n, sizeof(*sorted), cmp_strp);
	for (i = 1; i < n && !dup; i++)
		if (!strcmp(sorted[i - 1], sorted[i]))
			dup = sorted[i];
	free(sorted);
	return dup;
}

int
gguf_read_fd(int fd, uint64_t file_size, const char *name,
	     struct gguf_file *g)
{
	struct rd *r = xcalloc(1, sizeof(*r));
	size_t kv_alloc = 0, t_alloc = 0, i;
	char magic[4], **names = NULL;
	const char *dup;
	const struct gguf_kv *al;
	uint64_t n, at, expect;
	int ret = -1;

	memset(g, 0, sizeof(*g));
	r->fd = fd;
	r->name = name;
	r->size = file_size;
	g->file_size = file_size;

	if (rd_bytes(r, magic, 4, "magic") < 0)
		goto cleanup;
	if (memcmp(magic, GGUF_MAGIC, 4)) {
		rd_fail(r, 0, "bad magic (not a GGUF file)");
		goto cleanup;
	}
	if (rd_u32(r, &g->version, "version") < 0)
		goto cleanup;
	if (g->version != GGUF_VERSION) {
		rd_fail(r, 4, "unsupported GGUF version %" PRIu32 "%s",
			g->version, (g->version & 0xffff) == 0 ?
			" (wrong endianness?)" : " (only 3 is read)");
		goto cleanup;
	}
	at = r->pos;
	if (rd_u64(r, &g->n_tensors, "tensor count") < 0)
		goto cleanup;
	/* Each tensor info takes at least 8+4+4+8 bytes. */
	if (g->n_tensors > rd_left(r) / 24) {
		rd_fail(r, at, "tensor count %" PRIu64 " cannot fit in a "
			"%" PRIu64 "-byte file", g->n_tensors, file_size);
		goto cleanup;
	}
	at = r->pos;
	if (rd_u64(r, &g->n_kv, "key-value count") < 0)
		goto cleanup;
	/* Each pair takes at least 8+4+1 bytes. */
	if (g->n_kv > rd_left(r) / 13) {
		rd_fail(r, at, "key-value count %" PRIu64 " cannot fit in a "
			"%" PRIu64 "-byte file", g->n_kv, file_size);
		goto cleanup;
	}

	/* Memory grows only with what has actually been parsed. */
	for (n = 0; n < g->n_kv; n++) {
		grow((void **)&g->kv, &kv_alloc, n, sizeof(*g->kv));
		memset(&g->kv[n], 0, sizeof(g->kv[n]));
		if (read_kv(r, &g->kv[n]) < 0) {
			g->n_kv = n + 1;
			goto cleanup;
		}
	}
	names = xmalloc((g->n_kv ? g->n_kv : 1) * sizeof(*names));
	for (i = 0; i < g->n_kv; i++)
		names[i] = g->kv[i].key;
	if ((dup = find_duplicate(names, g->n_kv))) {
		rd_fail(r, gguf_find(g, dup)->offset, "duplicate key '%s'",
			dup);
		goto cleanup;
	}

	g->alignment = GGUF_DEFAULT_ALIGNMENT;
	if ((al = gguf_find(g, "general.alignment"))) {
		if (al->type != GGUF_U32 || al->u == 0 ||
		    (al->u & (al->u - 1))) {
			rd_fail(r, al->offset, "general.alignment must be a "
				"u32 power of two");
			goto cleanup;
		}
		g->alignment = (uint32_t)al->u;
	}

	for (n = 0; n < g->n_tensors; n++) {
		grow((void **)&g->tensors, &t_alloc, n, sizeof(*g->tensors));
		memset(&g->tensors[n], 0, sizeof(g->tensors[n]));
		if (read_tensor(r, &g->tensors[n]) < 0) {
			g->n_tensors = n + 1;
			goto cleanup;
		}
	}
	free(names);
	names = xmalloc((g->n_tensors ? g->n_tensors : 1) * sizeof(*names));
	for (i = 0; i < g->n_tensors; i++)
		names[i] = g->tensors[i].name;
	if ((dup = find_duplicate(names, g->n_tensors))) {
		rd_fail(r, r->pos, "duplicate tensor name '%s'", dup);
		goto cleanup;
	}

	/* The data section: aligned, tensors packed in order, in bounds. */
	g->data_offset = r->pos + (g->alignment - r->pos % g->alignment) %
		g->alignment;
	expect = 0;
	for (i = 0; i < g->n_tensors; i++) {
		struct gguf_tensor *t = &g->tensors[i];
		uint64_t padded, end;

		if (t->offset != expect) {
			rd_fail(r, g->data_offset + t->offset, "tensor '%s' "
				"has data offset %" PRIu64 ", expected %" PRIu64
				" (%s)", t->name, t->offset, expect,
				t->offset < expect ? "overlaps the previous "
				"tensor" : "leaves a gap");
			goto cleanup;
		}
		padded = t->nbytes + (g->alignment - t->nbytes %
				      g->alignment) % g->alignment;
		if (__builtin_add_overflow(expect, padded, &expect) ||
		    __builtin_add_overflow(g->data_offset, t->offset, &end) ||
		    __builtin_add_overflow(end, t->nbytes, &end) ||
		    end > file_size) {
			rd_fail(r, g->data_offset + t->offset, "tensor '%s' "
				"(%" PRIu64 " bytes) extends beyond the end of "
				"the %" PRIu64 "-byte file", t->name,
				t->nbytes, file_size);
			goto cleanup;
		}
		g->model_size += t->nbytes;
		g->n_params += t->nelements;
	}
	g->data_size = expect;
	ret = 0;
cleanup:
	free(names);
	free(r);
	if (ret < 0)
		gguf_free(g);
	return ret;
}

int
gguf_read(const char *path, struct gguf_file *g)
{
	struct stat st;
	int fd, ret;

	memset(g, 0, sizeof(*g));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error("'%s' is not a regular file", path);
	}
	ret = gguf_read_fd(fd, (uint64_t)st.st_size, path, g);
	close(fd);
	return ret;
}

void
gguf_free(struct gguf_file *g)
{
	uint64_t i;

	for (i = 0; g->kv && i < g->n_kv; i++) {
		free(g->kv[i].key);
		free(g->kv[i].str);
	}
	for (i = 0; g->tensors && i < g->n_tensors; i++)
		free(g->tensors[i].name);
	free(g->kv);
	free(g->tensors);
	memset(g, 0, sizeof(*g));
}

const struct gguf_kv *
gguf_find(const struct gguf_file *g, const char *key)
{
	uint64_t i;

	for (i = 0; i < g->n_kv; i++)
		if (g->kv[i].key && !strcmp(g->kv[i].key, key))
			return &g->kv[i];
	return NULL;
}

const char *
gguf_get_str(const struct gguf_file *g, const char *key)
{
	const struct gguf_kv *kv = gguf_find(g, key);

	return kv && kv->type == GGUF_STRING ? kv->str : NULL;
}

int
gguf_get_int(const struct gguf_file *g, const char *key, int64_t *out)
{
	const struct gguf_kv *kv = gguf_find(g, key);

	if (!kv)
		return -1;
	switch (kv->type) {
	case GGUF_U8: case GGUF_U16: case GGUF_U32: case GGUF_U64:
		if (kv->u > INT64_MAX)
			return -1;
		*out = (int64_t)kv->u;
		return 0;
	case GGUF_I8: case GGUF_I16: case GGUF_I32: case GGUF_I64:
		*out = kv->i;
		return 0;
	default:
		return -1;
	}
}

void
gguf_put_u32(struct buf *b, uint32_t v)
{
	unsigned char p[4];
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
	buf_add(b, p, 4);
}

void
gguf_put_u64(struct buf *b, uint64_t v)
{
	unsigned char p[8];
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
	buf_add(b, p, 8);
}

void
gguf_put_str(struct buf *b, const char *s)
{
	size_t n = strlen(s);

	gguf_put_u64(b, n);
	buf_add(b, s, n);
}

void
gguf_put_kv_str(struct buf *b, const char *key, const char *val)
{
	gguf_put_str(b, key);
	gguf_put_u32(b, GGUF_STRING);
	gguf_put_str(b, val);
}

void
gguf_put_kv_u32(struct buf *b, const char *key, uint32_t v)
{
	gguf_put_str(b, key);
	gguf_put_u32(b, GGUF_U32);
	gguf_put_u32(b, v);
}

void
gguf_put_kv_f32(struct buf *b, const char *key, float v)
{
	uint32_t bits;

	memcpy(&bits, &v, 4);
	gguf_put_str(b, key);
	gguf_put_u32(b, GGUF_F32);
	gguf_put_u32(b, bits);
}
