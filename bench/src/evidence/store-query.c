#define _POSIX_C_SOURCE 200809L
/*
 * Selections (selection.h) as queries: the rows a selection selects with
 * their samples, what the default left out, the configurations of stored
 * rows, and the facts of runs that provenance asks for.
 */
#include "evidence/store.h"
#include "evidence/store-internal.h"
#include "evidence/lbfields.h"
#include "evidence/selection.h"
#include "base/util.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The SQL of the selection keys that name a column, by enum sel_key. */
static const char *const sel_columns[SEL_NKEYS] = {
	[SEL_KEY_SESSION] = "r.session_id",
	[SEL_KEY_VARIANT] = "r.variant",
	[SEL_KEY_TARGET] = "r.target",
	[SEL_KEY_MODEL] = "r.model",
	[SEL_KEY_ROLE] = "r.role",
	[SEL_KEY_RUNTIME] = "r.runtime",
	[SEL_KEY_STATUS] = "r.status",
	[SEL_KEY_SESSION_STATUS] = "s.status",
	[SEL_KEY_TAMPERED] = "s.tampered",
	[SEL_KEY_VERIFICATION] = "r.verification",
	[SEL_KEY_TEST] = "x.test",
	[SEL_KEY_OS_BUILD] = "e.os_build",
	[SEL_KEY_OS_VERSION] = "e.os_version",
	[SEL_KEY_IDENTITY] = "e.identity",
	[SEL_KEY_BASE_IDENTITY] = "e.base_identity",
	[SEL_KEY_KIND] = "s.kind",
	[SEL_KEY_LABEL] = "s.label",
	[SEL_KEY_BUILD] = "x.build_commit",
	[SEL_KEY_SHA256] = "coalesce(r.model_sha256, a.sha256, '')",
};

/* ---- configurations -------------------------------------------------------- */

static void
config_release(struct store_config *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->keys[i]);
		free(c->values[i]);
	}
	free(c->keys);
	free(c->values);
	free(c->canon);
	memset(c, 0, sizeof(*c));
}

void
sq_configs_drop(struct store *s)
{
	size_t i;

	for (i = 0; i < s->nconfigs; i++)
		config_release(&s->configs[i]);
	free(s->configs);
	s->configs = NULL;
	s->nconfigs = 0;
	config_release(&s->none);
}

/* "$.a.b" or '$."t/s"' as "a.b" and "t/s" (caller frees). */
static char *
config_key(const char *fullkey)
{
	struct buf b = BUF_INIT;
	const char *p = fullkey;

	if (p[0] == '$')
		p++;
	if (p[0] == '.')
		p++;
	for (; *p; p++)
		if (*p != '"')
			buf_addch(&b, *p);
	return buf_detach(&b, NULL);
}

static int
cmp_kv(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;

	return strcmp(x[0], y[0]);
}

/* Sorts c's fields by key and writes its canonical text. */
static void
config_finish(struct store_config *c)
{
	char **kv = xcalloc(2 * c->n + 2, sizeof(char *));
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < c->n; i++) {
		kv[2 * i] = c->keys[i];
		kv[2 * i + 1] = c->values[i];
	}
	xqsort(kv, c->n, 2 * sizeof(char *), cmp_kv);
	for (i = 0; i < c->n; i++) {
		c->keys[i] = kv[2 * i];
		c->values[i] = kv[2 * i + 1];
		buf_addf(&b, "%s=%s\n", c->keys[i], c->values[i]);
	}
	free(kv);
	c->canon = buf_detach(&b, NULL);
}

/*
 * (Re)loads the configs table into the cache: one statement over the
 * table's leaves (json_tree), a few rows per configuration.
 */
static int
configs_load(struct store *s)
{
	sqlite3_stmt *st;
	int64_t max_id = 0;
	int rc;

	sq_configs_drop(s);
	s->none.canon = xstrdup("");
	st = sq_prepare(s, "SELECT max(id) FROM configs");
	if (!st)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		max_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	s->configs = xcalloc((size_t)max_id + 1, sizeof(*s->configs));
	s->nconfigs = (size_t)max_id + 1;
	st = sq_prepare(s, "SELECT c.id, j.fullkey, j.type, j.atom FROM configs c,"
		     " json_tree(c.json) j WHERE j.type NOT IN ('object','array')"
		     " ORDER BY c.id");
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		struct store_config *c;
		const char *type = (const char *)sqlite3_column_text(st, 2);
		const char *atom = (const char *)sqlite3_column_text(st, 3);

		if (id < 0 || id > max_id)
			continue;
		c = &s->configs[id];
		c->id = id;
		c->keys = xrealloc(c->keys, (c->n + 1) * sizeof(char *));
		c->values = xrealloc(c->values, (c->n + 1) * sizeof(char *));
		c->keys[c->n] = config_key((const char *)
					   sqlite3_column_text(st, 1));
		c->values[c->n] = xstrdup(type && !strcmp(type, "true") ?
					  "true" : type && !strcmp(type, "false") ?
					  "false" : atom ? atom : "null");
		c->n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sq_error(s, "read configurations");
	for (max_id = 0; (size_t)max_id < s->nconfigs; max_id++) {
		struct store_config *c = &s->configs[max_id];

		c->id = max_id;
		config_finish(c);
	}
	return 0;
}

/* The configuration of id (0 or unknown: an empty one); NULL on error. */
static const struct store_config *
store_config_get(struct store *s, int64_t id)
{
	if (!s->none.canon || (id > 0 && (size_t)id >= s->nconfigs)) {
		sq_op_begin(s);
		if (configs_load(s) < 0)
			return NULL;
	}
	if (id <= 0 || (size_t)id >= s->nconfigs)
		return &s->none;
	return &s->configs[id];
}

const char *
store_config_value(const struct store_config *c, const char *key)
{
	size_t i;

	for (i = 0; c && i < c->n; i++)
		if (!strcmp(c->keys[i], key))
			return c->values[i];
	for (i = 0; c && i < c->n; i++)
		if (lb_field_same(c->keys[i], key))
			return c->values[i];
	return NULL;
}

/* 1 when key names a configuration field whatever the store holds: one
 * with two names (backend and backends, fa and flash_attn). */
static int
config_alias(const char *key)
{
	const struct lb_field *f = lb_field_find(key);

	return f && f->md && f->role == LB_CONFIG;
}

/* 1 when key names a field of some stored configuration (or an alias). */
static int
config_key_known(struct store *s, const char *key)
{
	size_t i;

	if (!store_config_get(s, 0))
		return -1;
	if (config_alias(key))
		return 1;
	for (i = 0; i < s->nconfigs; i++)
		if (store_config_value(&s->configs[i], key))
			return 1;
	return 0;
}

/* ---- queries ---------------------------------------------------------------- */

/* Appends to names the distinct keys of the stored fingerprints. */
static int
fingerprint_keys(struct store *s, char ***names, size_t *n)
{
	sqlite3_stmt *st = sq_prepare(s, "SELECT DISTINCT j.key FROM"
				   " environments e, json_each(e.fingerprint_json) j"
				   " WHERE json_valid(e.fingerprint_json)");
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*names = strv_push(*names, n, sq_col_text(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sq_error(s, "fingerprint keys");
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * What a key not among the columns is: 1 a configuration field, 2 a
 * fingerprint key; RC_USAGE after error() naming the keys known; -1
 * error.
 */
static int
key_kind(struct store *s, const char *key)
{
	char **names = NULL;
	size_t n = 0, i, k;
	struct buf b = BUF_INIT;
	int rc = config_key_known(s, key);

	if (rc)
		return rc < 0 ? -1 : 1;
	if (fingerprint_keys(s, &names, &n) < 0)
		return -1;
	for (i = 0; i < n && strcmp(names[i], key); i++)
		;
	if (i < n) {
		strv_free(names);
		return 2;
	}
	/* unknown: name everything that is known */
	for (k = 1; k < SEL_NKEYS; k++)
		names = strv_push(names, &n,
				  xstrdup(selection_key_name((enum sel_key)k)));
	names = strv_push(names, &n, xstrdup("include"));
	for (k = 0; k < s->nconfigs; k++)
		for (i = 0; i < s->configs[k].n; i++)
			names = strv_push(names, &n,
					  xstrdup(s->configs[k].keys[i]));
	for (k = 0; k < lb_nfields; k++)
		if (config_alias(lb_fields[k].name))
			names = strv_push(names, &n, xstrdup(lb_fields[k].md));
	xqsort(names, n, sizeof(char *), cmp_str);
	for (i = 0; i < n; i++)
		if (!i || strcmp(names[i], names[i - 1]))
			buf_addf(&b, "%s%s", b.len ? ", " : "", names[i]);
	{
		const char *hint = closest_word(key, (const char *const *)names,
						n);

		if (hint)
			error("unknown selection key '%s' (did you mean '%s'?); "
			      "known keys: %s", key, hint, b.buf);
		else
			error("unknown selection key '%s'; known keys: %s", key,
			      b.buf);
	}
	buf_release(&b);
	strv_free(names);
	return RC_USAGE;
}

/*
 * The WHERE clause of a selection (after "WHERE 1") and, in order, the
 * values to bind (NULL-terminated; owned by the caller). counted: the
 * default exclusion applies, else its negation (what it left out).
 * 0; RC_USAGE unknown key; -1 error.
 */
static int
where_of(struct store *s, const struct selection *sel, int counted,
	 struct buf *w, char ***binds)
{
	size_t nb = 0, i, k;
	unsigned inc = sel ? sel->include : 0;
	struct buf cond = BUF_INIT;

	*binds = xcalloc(1, sizeof(char *));
	for (i = 0; sel && i < sel->n; i++) {
		const struct sel_term *t = &sel->t[i];
		int kind;

		if (t->latest >= 0) {
			buf_adds(w, " AND r.session_id=(SELECT id FROM sessions"
				 " ORDER BY id DESC LIMIT 1 OFFSET ?)");
			*binds = strv_push(*binds, &nb, xstrfmt("%ld", t->latest));
			continue;
		}
		if (t->key != SEL_KEY_OTHER) {
			buf_addf(w, " AND %s=?", sel_columns[t->key]);
			*binds = strv_push(*binds, &nb, xstrdup(t->value));
			continue;
		}
		kind = key_kind(s, t->name);
		if (kind < 0) {
			strv_free(*binds);
			*binds = NULL;
			return kind;
		}
		if (kind == 2) {
			buf_adds(w, " AND json_extract(e.fingerprint_json,"
				 " '$.' || ?)=?");
			*binds = strv_push(*binds, &nb, xstrdup(t->name));
			*binds = strv_push(*binds, &nb, xstrdup(t->value));
			continue;
		}
		/* a configuration field: the ids whose value matches */
		buf_adds(w, " AND coalesce(rc.config_id,0) IN (-1");
		for (k = 1; k < s->nconfigs; k++) {
			const char *v = store_config_value(&s->configs[k], t->name);

			if (v && selection_value_matches(v, t->value))
				buf_addf(w, ",%zu", k);
		}
		buf_adds(w, ")");
	}
	/* the default: what counts (selection.h) */
	buf_adds(&cond, "(s.status IN (");
	for (i = k = 0; i < selection_nstatuses; i++)
		if (!selection_statuses[i].bit || (selection_statuses[i].bit & inc)) {
			buf_adds(&cond, k++ ? ",?" : "?");
			*binds = strv_push(*binds, &nb,
					   xstrdup(session_state_name(
						   selection_statuses[i].state)));
		}
	buf_adds(&cond, ")");
	if (!(inc & SEL_TAMPERED))
		buf_adds(&cond, " AND s.tampered=0");
	if (!(inc & SEL_PARTIAL))
		buf_adds(&cond, " AND r.status='ok'");
	buf_adds(&cond, ")");
	buf_addf(w, counted ? " AND %s" : " AND NOT %s", cond.buf);
	buf_release(&cond);
	return 0;
}

static void
bind_all(sqlite3_stmt *st, char *const *binds)
{
	int i;

	for (i = 0; binds && binds[i]; i++)
		sq_bind_text(st, i + 1, binds[i]);
}

#define RESULTS_FROM \
	" FROM results x JOIN runs r ON r.id=x.run_id" \
	" LEFT JOIN result_configs rc ON rc.result_id=x.id" \
	" JOIN sessions s ON s.id=r.session_id" \
	" LEFT JOIN environments e ON e.id=r.environment_id" \
	" LEFT JOIN artifacts a ON a.id=r.artifact_id" \
	" WHERE 1"

struct rid_row {
	int64_t id;
	size_t row;
};

static int
cmp_rid(const void *a, const void *b)
{
	const struct rid_row *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * One pass over the samples of result ids [lo, hi], placed into rows by
 * ix, each row's samples straight into its own array (cap: their
 * capacities). scan: the table in its own (insertion) order, every row
 * read once (for large selections); else the primary key's index over
 * the range. Returns 0; 1 when a scan met samples out of idx order (the
 * caller reads again by the index); -1 after error().
 */
static int
samples_pass(struct store *s, struct store_result *const *rp, size_t n,
	     const struct rid_row *ix, int scan, size_t *cap)
{
	size_t last = 0;
	sqlite3_stmt *st;
	int rc;

	st = sq_prepare(s, scan ?
		     "SELECT result_id, idx, ts FROM samples NOT INDEXED"
		     " WHERE result_id BETWEEN ?1 AND ?2" :
		     "SELECT result_id, idx, ts FROM samples"
		     " WHERE result_id BETWEEN ?1 AND ?2 ORDER BY result_id, idx");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, ix[0].id);
	sqlite3_bind_int64(st, 2, ix[n - 1].id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		size_t lo = 0, hi = n, k;
		struct store_result *r;

		if (ix[last].id != id) {
			/* samples come in id order: mostly the next row, or
			 * one between it and the last (not selected) */
			if (last + 1 < n && ix[last + 1].id == id) {
				lo = last + 1;
			} else if (id > ix[last].id &&
				   (last + 1 == n || id < ix[last + 1].id)) {
				continue;
			} else {
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;

					if (ix[mid].id < id)
						lo = mid + 1;
					else
						hi = mid;
				}
				if (lo == n || ix[lo].id != id)
					continue;   /* not a row of the selection */
			}
			last = lo;
		}
		k = ix[last].row;
		r = rp[k];
		if (sqlite3_column_int64(st, 1) != (int64_t)r->n) {
			sqlite3_finalize(st);
			return 1;           /* out of idx order */
		}
		if (r->n == cap[k]) {
			cap[k] = cap[k] ? 2 * cap[k] : 16;
			r->ts = xrealloc(r->ts, cap[k] * sizeof(double));
		}
		r->ts[r->n++] = sqlite3_column_double(st, 2);
	}
	sqlite3_finalize(st);
	/* A damaged page is an error, never fewer samples. */
	if (rc != SQLITE_DONE)
		return sq_error(s, "query samples");
	return 0;
}

/*
 * The samples of the rows *rp[0..n), one statement (two when a table
 * scan meets samples out of order): read over the range of the rows'
 * result ids without a join (a sample whose result is not a row is
 * skipped) and placed by result id in idx order. Every row gets an array
 * (ts), if without samples. 0; -1 after error(); 2 when two rows are
 * one result (nothing read: the caller reads each side alone).
 */
static int
load_samples(struct store *s, struct store_result *const *rp, size_t n)
{
	struct rid_row *ix;
	size_t *cap, i;
	int rc;

	if (!n)
		return 0;
	ix = xcalloc(n, sizeof(*ix));
	cap = xcalloc(n, sizeof(*cap));
	for (i = 0; i < n; i++) {
		ix[i].id = rp[i]->result_id;
		ix[i].row = i;
	}
	xqsort(ix, n, sizeof(*ix), cmp_rid);
	for (i = 1; i < n && ix[i].id != ix[i - 1].id; i++)
		;
	if (i < n) {
		free(cap);
		free(ix);
		return 2;
	}
	/* many results: one sequential scan beats an index lookup per sample */
	rc = samples_pass(s, rp, n, ix, n > 5000, cap);
	if (rc == 1) {
		for (i = 0; i < n; i++)
			rp[i]->n = 0;
		rc = samples_pass(s, rp, n, ix, 0, cap);
	}
	for (i = 0; i < n; i++)
		if (!rp[i]->ts)
			rp[i]->ts = xmalloc(sizeof(double));
	free(cap);
	free(ix);
	return rc == 0 ? 0 : -1;
}

/* The row pointers of rows[0..n) followed by more[0..nmore) (caller
 * frees). */
static struct store_result **
row_pointers(struct store_result *rows, size_t n, struct store_result *more,
	     size_t nmore)
{
	struct store_result **rp = xmalloc((n + nmore + 1) * sizeof(*rp));
	size_t i;

	for (i = 0; i < n; i++)
		rp[i] = &rows[i];
	for (i = 0; i < nmore; i++)
		rp[n + i] = &more[i];
	return rp;
}

/* The samples of rows[0..n), as load_samples() reads them. */
static int
load_samples_of(struct store *s, struct store_result *rows, size_t n)
{
	struct store_result **rp = row_pointers(rows, n, NULL, 0);
	int rc = load_samples(s, rp, n);

	free(rp);
	return rc == 0 ? 0 : -1;     /* one side's results are distinct */
}

/* The order of result rows: session, run seq, run id, result idx. */
struct row_key {
	int64_t session, seq, run, idx;
	size_t pos;
};

static int
cmp_row_key(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;

	if (x->session != y->session)
		return x->session < y->session ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static uint64_t
str_hash(const char *t, size_t len)
{
	uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)t[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * Column i as a string owned by the store (one copy per distinct value:
 * a result query repeats the same few hundred strings many thousands of
 * times). "" for NULL.
 */
/* The pool's copy of t[0..len) (interned: one copy of each value). */
static char *
str_interned(struct store *s, const char *t, size_t len)
{
	size_t k;
	uint64_t h;

	if (2 * (s->npool + 1) > s->cap_pool) {
		size_t cap = s->cap_pool ? 2 * s->cap_pool : 1024;
		char **pool = xcalloc(cap, sizeof(char *));

		for (k = 0; k < s->cap_pool; k++) {
			size_t j;

			if (!s->pool[k])
				continue;
			j = str_hash(s->pool[k], strlen(s->pool[k])) & (cap - 1);
			while (pool[j])
				j = (j + 1) & (cap - 1);
			pool[j] = s->pool[k];
		}
		free(s->pool);
		s->pool = pool;
		s->cap_pool = cap;
	}
	h = str_hash(t, len);
	for (k = h & (s->cap_pool - 1); s->pool[k]; k = (k + 1) & (s->cap_pool - 1))
		if (!strncmp(s->pool[k], t, len) && !s->pool[k][len])
			return s->pool[k];
	s->pool[k] = xstrndup(t, len);
	s->npool++;
	return s->pool[k];
}

static char *
col_interned(struct store *s, sqlite3_stmt *st, int i, char **lastv)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	size_t len = t ? (size_t)sqlite3_column_bytes(st, i) : 0;

	if (!t)
		t = "";
	/* consecutive rows mostly repeat a column's value */
	if (lastv[i] && !strncmp(lastv[i], t, len) && !lastv[i][len])
		return lastv[i];
	return lastv[i] = str_interned(s, t, len);
}

/*
 * A row's own model (store.h): the base name of its model_filename
 * (file: the column, NULL when the model has a SHA-256: a file's name is
 * no identity where the hash is one, the same model lies under other
 * paths on other hosts), and the label "model not named: type (file)"
 * for a run that names no model.
 */
static void
row_model(struct store *s, struct store_result *r, const char *file)
{
	const char *base = file ? strrchr(file, '/') : NULL;
	char *label;

	base = base ? base + 1 : file ? file : "";
	r->model_file = str_interned(s, base, strlen(base));
	if (*r->model || *r->model_label || (!*r->model_type && !*base))
		return;
	if (*r->model_type && *base)
		label = xstrfmt("model not named: %s (%s)", r->model_type, base);
	else
		label = xstrfmt("model not named: %s", *base ? base :
				r->model_type);
	r->model_label = str_interned(s, label, strlen(label));
	free(label);
}

/* The row's model type, and its file's name when the model has no hash
 * (row_model() takes it from there). */
#define MODEL_TYPE "coalesce(x.model_type,'')"
#define MODEL_FILE \
	"CASE WHEN coalesce(r.model_sha256, a.sha256, '')='' THEN (SELECT" \
	" json_extract(w.raw_json,'$.model_filename') FROM result_raw w" \
	" WHERE w.result_id=x.id) END"

/*
 * The rows of a selection in order, without their samples (ts NULL, n
 * 0) and configurations: what store_query_results() returns, less what
 * rows_finish() adds.
 */
static int
query_rows(struct store *s, const struct selection *sel,
	   struct store_result **out, size_t *n)
{
	struct buf sql = BUF_INIT, where = BUF_INIT;
	struct store_result *rows = NULL;
	struct row_key *keys = NULL;
	size_t nrows = 0, cap = 0;
	char **binds = NULL, *lastv[40] = { 0 };
	sqlite3_stmt *st = NULL;
	int rc, ret = -1, sorted = 1;

	sq_op_begin(s);
	*out = NULL;
	*n = 0;
	if (!store_config_get(s, 0))
		return -1;
	rc = where_of(s, sel, 1, &where, &binds);
	if (rc < 0) {
		buf_release(&where);
		return rc;
	}
	buf_addf(&sql,
		"SELECT s.id, r.id, x.id, coalesce(r.environment_id,0),"
		" coalesce(rc.config_id,0), s.started_at,"
		" CASE WHEN coalesce(r.started_at,'')<>'' THEN r.started_at"
		"  ELSE coalesce((SELECT json_extract(w.raw_json,'$.test_time')"
		"   FROM result_raw w WHERE w.result_id=x.id),'') END,"
		" s.status, s.tampered, r.target, r.variant,"
		" r.role, r.model, coalesce(r.model_label,''), r.runtime,"
		" coalesce(r.model_sha256, a.sha256, ''), " MODEL_TYPE ", "
		MODEL_FILE ", r.status,"
		" r.verification, x.test, x.n_prompt, x.n_gen, x.n_depth,"
		" x.build_commit, e.os_build, e.os_version, e.identity,"
		" e.base_identity, x.model_size, x.model_n_params, r.seq, x.idx,"
		" x.avg_ts, x.stddev_ts, coalesce(x.spread_source,'samples')"
		RESULTS_FROM "%s", where.buf);
	st = sq_prepare(s, sql.buf);
	if (!st)
		goto cleanup;
	bind_all(st, binds);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_result *r;
		int k = 0;

		if (nrows == cap) {
			cap = cap ? 2 * cap : 64;
			rows = xrealloc(rows, cap * sizeof(*rows));
			keys = xrealloc(keys, cap * sizeof(*keys));
		}
		r = &rows[nrows++];
		memset(r, 0, sizeof(*r));
		r->session_id = sqlite3_column_int64(st, k++);
		r->run_id = sqlite3_column_int64(st, k++);
		r->result_id = sqlite3_column_int64(st, k++);
		r->environment_id = sqlite3_column_int64(st, k++);
		r->config_id = sqlite3_column_int64(st, k++);
		r->session_started = col_interned(s, st, k++, lastv);
		r->measured_at = col_interned(s, st, k++, lastv);
		r->session_status = col_interned(s, st, k++, lastv);
		r->session_tampered = sqlite3_column_int(st, k++);
		r->target = col_interned(s, st, k++, lastv);
		r->variant = col_interned(s, st, k++, lastv);
		r->role = col_interned(s, st, k++, lastv);
		r->model = col_interned(s, st, k++, lastv);
		r->model_label = col_interned(s, st, k++, lastv);
		r->runtime = col_interned(s, st, k++, lastv);
		r->model_sha256 = col_interned(s, st, k++, lastv);
		r->model_type = col_interned(s, st, k++, lastv);
		row_model(s, r, (const char *)sqlite3_column_text(st, k++));
		r->run_status = col_interned(s, st, k++, lastv);
		r->verification = col_interned(s, st, k++, lastv);
		r->test = col_interned(s, st, k++, lastv);
		r->n_prompt = sqlite3_column_int64(st, k++);
		r->n_gen = sqlite3_column_int64(st, k++);
		r->n_depth = sqlite3_column_int64(st, k++);
		r->build_commit = col_interned(s, st, k++, lastv);
		r->os_build = col_interned(s, st, k++, lastv);
		r->os_version = col_interned(s, st, k++, lastv);
		r->identity = col_interned(s, st, k++, lastv);
		r->base_identity = col_interned(s, st, k++, lastv);
		r->model_size = sqlite3_column_int64(st, k++);
		r->model_n_params = sqlite3_column_int64(st, k++);
		keys[nrows - 1].session = r->session_id;
		keys[nrows - 1].seq = sqlite3_column_int64(st, k++);
		keys[nrows - 1].run = r->run_id;
		keys[nrows - 1].idx = sqlite3_column_int64(st, k++);
		keys[nrows - 1].pos = nrows - 1;
		r->avg_ts = sqlite3_column_type(st, k) == SQLITE_NULL ? NAN :
			sqlite3_column_double(st, k);
		k++;
		r->stddev_ts = sqlite3_column_type(st, k) == SQLITE_NULL ? NAN :
			sqlite3_column_double(st, k);
		k++;
		r->from_table = !strcmp((const char *)sqlite3_column_text(st, k++),
					"table");
		if (nrows > 1 && cmp_row_key(&keys[nrows - 2], &keys[nrows - 1]) > 0)
			sorted = 0;
	}
	if (rc != SQLITE_DONE) {
		sq_error(s, "query results");
		goto cleanup;
	}
	sqlite3_finalize(st);
	st = NULL;
	/* ordered here: an ORDER BY made SQLite sort every wide row */
	if (!sorted) {
		struct store_result *by = xmalloc((nrows ? nrows : 1) * sizeof(*by));
		size_t i;

		xqsort(keys, nrows, sizeof(*keys), cmp_row_key);
		for (i = 0; i < nrows; i++)
			by[i] = rows[keys[i].pos];
		free(rows);
		rows = by;
	}
	*out = rows;
	*n = nrows;
	rows = NULL;
	nrows = 0;
	ret = 0;
cleanup:
	sqlite3_finalize(st);
	store_results_free(rows, nrows);
	free(keys);
	strv_free(binds);
	buf_release(&sql);
	buf_release(&where);
	return ret;
}

/* The configurations of rows[0..n) (added meanwhile by another writer:
 * reloaded once). 0; -1 after error(). */
static int
rows_configs(struct store *s, struct store_result *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		rows[i].config = store_config_get(s, rows[i].config_id);
		if (!rows[i].config)
			return -1;
	}
	return 0;
}

int
store_query_results(struct store *s, const struct selection *sel,
		    struct store_result **out, size_t *n)
{
	int rc = query_rows(s, sel, out, n);

	if (rc != 0)
		return rc;
	if (load_samples_of(s, *out, *n) < 0 || rows_configs(s, *out, *n) < 0) {
		store_results_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* 1 when every key of sel is one the store knows (nothing said), else
 * 0. */
static int
selection_known(struct store *s, const struct selection *sel)
{
	struct buf w = BUF_INIT;
	char **binds = NULL;
	int rc;

	error_silent++;
	rc = where_of(s, sel, 1, &w, &binds);
	error_silent--;
	strv_free(binds);
	buf_release(&w);
	return rc == 0;
}

int
store_query_results_pair(struct store *s, const struct selection *a,
			 const struct selection *b, struct store_result **ra,
			 size_t *na, struct store_result **rb, size_t *nb)
{
	struct store_result **rp;
	int rc;

	*ra = *rb = NULL;
	*na = *nb = 0;
	if (!store_config_get(s, 0))
		return -1;
	if (!selection_known(s, a) || !selection_known(s, b))
		return 1;
	if (query_rows(s, a, ra, na) != 0 || query_rows(s, b, rb, nb) != 0)
		goto fail;
	rp = row_pointers(*ra, *na, *rb, *nb);
	rc = load_samples(s, rp, *na + *nb);
	free(rp);
	if (rc == 2)          /* the selections share results: one at a time */
		rc = load_samples_of(s, *ra, *na) < 0 ||
		     load_samples_of(s, *rb, *nb) < 0 ? -1 : 0;
	if (rc == 0 && rows_configs(s, *ra, *na) == 0 &&
	    rows_configs(s, *rb, *nb) == 0)
		return 0;
fail:
	store_results_free(*ra, *na);
	store_results_free(*rb, *nb);
	*ra = *rb = NULL;
	*na = *nb = 0;
	return -1;
}

void
store_results_free(struct store_result *r, size_t n)
{
	size_t i;

	/* the strings are the store's (interned) */
	for (i = 0; i < n; i++)
		free(r[i].ts);
	free(r);
}

int
store_query_left_out(struct store *s, const struct selection *sel,
		     struct store_left_out **out, size_t *n)
{
	struct buf sql = BUF_INIT, where = BUF_INIT;
	struct store_left_out *v = NULL;
	char **binds = NULL;
	sqlite3_stmt *st;
	size_t k = 0;
	int rc;

	sq_op_begin(s);
	*out = NULL;
	*n = 0;
	if (!store_config_get(s, 0))
		return -1;
	rc = where_of(s, sel, 0, &where, &binds);
	if (rc < 0) {
		buf_release(&where);
		return rc;
	}
	buf_addf(&sql, "SELECT s.id, s.status, s.tampered, r.status,"
		 " count(DISTINCT r.id), count(*)" RESULTS_FROM "%s"
		 " GROUP BY s.id, s.status, s.tampered, r.status"
		 " ORDER BY s.id, r.status", where.buf);
	st = sq_prepare(s, sql.buf);
	if (st) {
		bind_all(st, binds);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct store_left_out *l;

			v = xrealloc(v, (k + 1) * sizeof(*v));
			l = &v[k++];
			l->session = sqlite3_column_int64(st, 0);
			l->session_status = sq_col_text(st, 1);
			l->tampered = sqlite3_column_int(st, 2);
			l->run_status = sq_col_text(st, 3);
			l->runs = (long)sqlite3_column_int64(st, 4);
			l->results = (long)sqlite3_column_int64(st, 5);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			sq_error(s, "query what was left out");
	}
	strv_free(binds);
	buf_release(&sql);
	buf_release(&where);
	if (s->nErr) {
		store_left_out_free(v, k);
		return -1;
	}
	*out = v;
	*n = k;
	return 0;
}

void
store_left_out_free(struct store_left_out *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(l[i].session_status);
		free(l[i].run_status);
	}
	free(l);
}

/* ---- provenance ----------------------------------------------------------- */

static void
facts_empty(struct store_run_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->target = f->variant = f->role = f->runtime = f->model =
		f->model_label = f->model_sha256 = f->model_file =
		f->started_at = f->status = f->verification = (char *)"";
}

struct id_at {
	int64_t id;
	size_t at;
};

static int
cmp_id_at(const void *a, const void *b)
{
	const struct id_at *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * One statement over the range of the ids (not one per id: a report of
 * 10,000 sessions asks for 60,000 runs), each row placed where its id
 * was asked for; ids not found stay empty records with id 0.
 */
int
store_run_facts(struct store *s, const int64_t *ids, size_t n,
		struct store_run_facts **out)
{
	struct store_run_facts *v = xcalloc(n ? n : 1, sizeof(*v));
	struct id_at *ix = xcalloc(n ? n : 1, sizeof(*ix));
	sqlite3_stmt *st;
	size_t i;
	char *lastv[16] = { 0 };
	int rc = SQLITE_DONE;

	sq_op_begin(s);
	*out = NULL;
	for (i = 0; i < n; i++) {
		ix[i].id = ids[i];
		ix[i].at = i;
	}
	xqsort(ix, n, sizeof(*ix), cmp_id_at);
	st = n ? sq_prepare(s,
		"SELECT r.id, r.session_id, coalesce(r.environment_id, 0),"
		" r.target, r.variant, r.role, r.runtime, coalesce(r.model, ''),"
		" coalesce(r.model_label, r.model, ''),"
		" coalesce(r.model_sha256, a.sha256, ''), coalesce(a.path, ''),"
		" coalesce(r.started_at, ''), r.status, r.verification"
		" FROM runs r LEFT JOIN artifacts a ON a.id=r.artifact_id"
		" WHERE r.id BETWEEN ?1 AND ?2 ORDER BY r.id") : NULL;
	if (n && !st) {
		free(v);
		free(ix);
		return -1;
	}
	if (n) {
		sqlite3_bind_int64(st, 1, ix[0].id);
		sqlite3_bind_int64(st, 2, ix[n - 1].id);
	}
	i = 0;
	while (n && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		while (i < n && ix[i].id < id)
			i++;
		/* every place that asked for this id (an id asked twice) */
		for (; i < n && ix[i].id == id; i++) {
			struct store_run_facts *f = &v[ix[i].at];
			int k = 0;

			f->id = sqlite3_column_int64(st, k++);
			f->session_id = sqlite3_column_int64(st, k++);
			f->environment_id = sqlite3_column_int64(st, k++);
			f->target = col_interned(s, st, k++, lastv);
			f->variant = col_interned(s, st, k++, lastv);
			f->role = col_interned(s, st, k++, lastv);
			f->runtime = col_interned(s, st, k++, lastv);
			f->model = col_interned(s, st, k++, lastv);
			f->model_label = col_interned(s, st, k++, lastv);
			f->model_sha256 = col_interned(s, st, k++, lastv);
			f->model_file = col_interned(s, st, k++, lastv);
			f->started_at = col_interned(s, st, k++, lastv);
			f->status = col_interned(s, st, k++, lastv);
			f->verification = col_interned(s, st, k++, lastv);
		}
	}
	sqlite3_finalize(st);
	for (i = 0; i < n; i++)
		if (!v[i].target)
			facts_empty(&v[i]);
	free(ix);
	if (n && rc != SQLITE_DONE) {
		store_run_facts_free(v, n);
		return sq_error(s, "read run facts");
	}
	*out = v;
	return 0;
}

void
store_run_facts_free(struct store_run_facts *f, size_t n)
{
	(void)n;                /* the strings are the store's (interned) */
	free(f);
}

int
store_run_capabilities(struct store *s, const int64_t *ids, size_t n,
		       const char ***out)
{
	const char **v = xcalloc(n + 1, sizeof(*v));
	char *lastv[16] = { 0 };
	sqlite3_stmt *st;
	size_t i;
	int rc = SQLITE_DONE;

	sq_op_begin(s);
	*out = NULL;
	st = sq_prepare(s, "SELECT coalesce(capabilities_json, '') FROM runs "
			"WHERE id=?1");
	if (!st) {
		free(v);
		return -1;
	}
	for (i = 0; i < n; i++) {
		v[i] = "";
		sqlite3_bind_int64(st, 1, ids[i]);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			v[i] = col_interned(s, st, 0, lastv);
			rc = SQLITE_DONE;
		}
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			break;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return sq_error(s, "read capability facts");
	}
	*out = v;
	return 0;
}
