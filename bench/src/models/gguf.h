#ifndef GGUF_H
#define GGUF_H

/*
 * A bounded reader for GGUF v3 headers: metadata key-value pairs and
 * tensor infos, never the tensor data. Built to survive hostile files:
 * every read is checked against the file size, memory grows only with
 * bytes actually parsed (never with a count the file claims), and every
 * inconsistency is an error naming the byte offset where it was found.
 *
 * Also the ggml type traits (block size, bytes per block) and the names
 * of llama.cpp's general.file_type values, and a little-endian writer
 * used by the synthetic model generator.
 */

#include <stddef.h>
#include <stdint.h>

#define GGUF_MAGIC "GGUF"
#define GGUF_VERSION 3
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4
#define GGUF_MAX_NAME 64          /* tensor names are < 64 bytes */
#define GGUF_STR_KEEP 256         /* string values kept for display */

/* Metadata value types. */
enum gguf_vtype {
	GGUF_U8 = 0, GGUF_I8 = 1, GGUF_U16 = 2, GGUF_I16 = 3,
	GGUF_U32 = 4, GGUF_I32 = 5, GGUF_F32 = 6, GGUF_BOOL = 7,
	GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_U64 = 10, GGUF_I64 = 11,
	GGUF_F64 = 12,
};

/* ggml tensor types used by the synthetic generator. */
enum {
	GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q8_0 = 8,
	GGML_Q4_K = 12, GGML_Q6_K = 14, GGML_BF16 = 30,
};

struct gguf_kv {
	char *key;
	int type;              /* enum gguf_vtype */
	uint64_t offset;       /* file offset of the key */
	/* Scalars: exactly one of these is meaningful, by type. */
	uint64_t u;            /* unsigned integers and bool */
	int64_t i;             /* signed integers */
	double f;              /* f32 and f64 */
	/* Strings: the first GGUF_STR_KEEP bytes, NUL-terminated. */
	char *str;
	uint64_t str_len;      /* full length in the file */
	/* Arrays: element type and count; elements are skipped. */
	int arr_type;
	uint64_t arr_n;
};

struct gguf_tensor {
	char *name;
	uint32_t n_dims;
	int64_t ne[GGUF_MAX_DIMS];   /* unused dimensions are 1 */
	int type;                    /* ggml type */
	uint64_t offset;             /* relative to the data section */
	uint64_t nelements;
	uint64_t nbytes;
};

struct gguf_file {
	uint32_t version;
	uint64_t n_tensors, n_kv;
	struct gguf_kv *kv;
	struct gguf_tensor *tensors;
	uint32_t alignment;
	uint64_t data_offset;   /* file offset of the tensor data */
	uint64_t data_size;     /* padded sizes summed: data section length */
	uint64_t file_size;
	uint64_t n_params;      /* sum of nelements: llama-bench model_n_params */
	uint64_t model_size;    /* sum of nbytes: llama-bench model_size */
};

/*
 * Reads path's header and tensor infos into g (zeroed first). Returns 0,
 * or -1 after error() naming the file and the offset of the problem; g
 * is then empty. Release with gguf_free().
 */
int gguf_read(const char *path, struct gguf_file *g);
/* Same, from an open descriptor whose size is file_size; name for errors. */
int gguf_read_fd(int fd, uint64_t file_size, const char *name,
		 struct gguf_file *g);
void gguf_free(struct gguf_file *g);

/* The key-value pair named key, or NULL. Borrowed from g. */
const struct gguf_kv *gguf_find(const struct gguf_file *g, const char *key);
/* The string value of key, or NULL when absent or not a string. */
const char *gguf_get_str(const struct gguf_file *g, const char *key);
/* An integer value of any integer type; 0, or -1 when absent/other. */
int gguf_get_int(const struct gguf_file *g, const char *key, int64_t *out);

/* Name of a metadata value type ("u32", "string"…), "?" when unknown. */
const char *gguf_vtype_name(int type);

/*
 * ggml type traits: 0 and block size (elements) / bytes per block, or
 * -1 when the type is unknown (or removed from GGUF).
 */
int ggml_type_traits(int type, uint32_t *blck, uint32_t *size);
/* "F32", "Q4_K"…, NULL when unknown. */
const char *ggml_type_name(int type);
/* Type number for a name (case-insensitive), -1 when unknown. */
int ggml_type_from_name(const char *name);
/* Short name of a general.file_type value ("Q4_K_M"), NULL when unknown. */
const char *gguf_file_type_name(int64_t ftype);

/*
 * Little-endian GGUF writing into a struct buf (util.h), for headers.
 * Tensor data is written by the caller, streaming.
 */
struct buf;
void gguf_put_u32(struct buf *b, uint32_t v);
void gguf_put_u64(struct buf *b, uint64_t v);
void gguf_put_str(struct buf *b, const char *s);
void gguf_put_kv_str(struct buf *b, const char *key, const char *val);
void gguf_put_kv_u32(struct buf *b, const char *key, uint32_t v);
void gguf_put_kv_f32(struct buf *b, const char *key, float v);

#endif
