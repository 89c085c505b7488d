#define _POSIX_C_SOURCE 200809L
/*
 * Noise floors (calibrate, compare, gate) and the sessions a baseline
 * may be (analysis/baseline.c chooses among them).
 */
#include "evidence/store.h"
#include "evidence/store-internal.h"
#include "base/util.h"

#include <sqlite3.h>
#include <stdlib.h>

static int
noise_add_one(struct store *s, const struct noise_rec *r)
{
	char now[21];
	sqlite3_stmt *st;

	sq_op_begin(s);
	st = sq_prepare(s,
		"INSERT INTO noise(identity, target, model, test, session_id,"
		" processes, samples, within_cv, between_cv, mde, created_at,"
		" details_json, variant, config)"
		" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)");

	if (!st)
		return -1;
	utc_now(now);
	sq_bind_text(st, 1, r->identity);
	sq_bind_text(st, 2, r->target);
	sq_bind_text(st, 3, r->model);
	sq_bind_text(st, 4, r->test);
	sq_bind_id(st, 5, r->session_id);
	sqlite3_bind_int(st, 6, r->processes);
	sqlite3_bind_int(st, 7, r->samples);
	sqlite3_bind_double(st, 8, r->within_cv);
	sqlite3_bind_double(st, 9, r->between_cv);
	sqlite3_bind_double(st, 10, r->mde);
	sq_bind_text(st, 11, now);
	sq_bind_text(st, 12, r->details_json);
	sq_bind_text(st, 13, r->variant);
	sq_bind_text(st, 14, r->config ? r->config : "");
	return sq_insert_id(s, st, "add noise calibration", NULL);
}

int
store_noise_add(struct store *s, const struct noise_rec *r)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, noise_add_one(s, r));
}

int
store_noise_get(struct store *s, const struct noise_key *k, double *between,
		double *within, int64_t *session, int *processes)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	sq_op_begin(s);
	st = sq_prepare(s,
		"SELECT between_cv, within_cv, coalesce(session_id,0),"
		" coalesce(processes,0)"
		" FROM noise WHERE identity=?1 AND test=?2 AND model IS ?3"
		" AND variant IS ?4 AND coalesce(config,'') IS ?5"
		" ORDER BY id DESC LIMIT 1");

	if (!st)
		return -1;
	sq_bind_text(st, 1, k->identity);
	sq_bind_text(st, 2, k->test);
	sq_bind_text(st, 3, k->model);
	sq_bind_text(st, 4, k->variant);
	sq_bind_text(st, 5, k->config ? k->config : "");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*between = sqlite3_column_double(st, 0);
		*within = sqlite3_column_double(st, 1);
		if (session)
			*session = sqlite3_column_int64(st, 2);
		if (processes)
			*processes = sqlite3_column_int(st, 3);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = sq_error(s, "noise lookup");
	}
	sqlite3_finalize(st);
	return found;
}

long
store_noise_others(struct store *s, const struct noise_key *k)
{
	sqlite3_stmt *st;
	long n = -1;

	sq_op_begin(s);
	st = sq_prepare(s, "SELECT count(*) FROM noise WHERE identity=?1 AND"
		     " test=?2");
	if (!st)
		return -1;
	sq_bind_text(st, 1, k->identity);
	sq_bind_text(st, 2, k->test);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	else
		sq_error(s, "noise lookup");
	sqlite3_finalize(st);
	return n;
}

int
store_sessions_of_base(struct store *s, const char *base,
		       const char *os_build, int64_t exclude,
		       struct store_base_session **out, size_t *n)
{
	struct store_base_session *v = NULL;
	sqlite3_stmt *st;
	size_t k = 0;
	int rc;

	sq_op_begin(s);
	*out = NULL;
	*n = 0;
	st = sq_prepare(s,
		"SELECT x.id, coalesce(x.status,''), x.tampered,"
		" coalesce(e.os_build,''),"
		" coalesce((SELECT max(r.started_at) FROM runs r"
		"  WHERE r.session_id=x.id), x.started_at, '') AS m"
		" FROM environments e JOIN sessions x ON x.id=e.session_id"
		" WHERE e.base_identity=?1 AND coalesce(e.os_build,'') IS NOT ?2"
		" AND e.session_id<>?3"
		" GROUP BY x.id ORDER BY m DESC, x.id DESC");
	if (!st)
		return -1;
	sq_bind_text(st, 1, base);
	sq_bind_text(st, 2, os_build);
	sqlite3_bind_int64(st, 3, exclude);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_base_session *b;

		v = xrealloc(v, (k + 1) * sizeof(*v));
		b = &v[k++];
		b->id = sqlite3_column_int64(st, 0);
		b->status = sq_col_text(st, 1);
		b->tampered = sqlite3_column_int(st, 2);
		b->os_build = sq_col_text(st, 3);
		b->measured = sq_col_text(st, 4);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_base_sessions_free(v, k);
		return sq_error(s, "sessions of a base fingerprint");
	}
	*out = v;
	*n = k;
	return 0;
}

void
store_base_sessions_free(struct store_base_session *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].status);
		free(v[i].os_build);
		free(v[i].measured);
	}
	free(v);
}

int
store_noise_list(struct store *s, struct store_noise_row **out, size_t *n)
{
	sqlite3_stmt *st;
	struct store_noise_row *v = NULL;
	size_t k = 0;
	int rc;

	sq_op_begin(s);
	*out = NULL;
	*n = 0;
	st = sq_prepare(s, "SELECT id, coalesce(session_id,0), identity,"
		     " coalesce(target,''), coalesce(model,''), test,"
		     " coalesce(created_at,''), coalesce(details_json,''),"
		     " coalesce(processes,0), coalesce(samples,0), within_cv,"
		     " between_cv, mde FROM noise ORDER BY id");
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_noise_row *r;

		v = xrealloc(v, (k + 1) * sizeof(*v));
		r = &v[k++];
		r->id = sqlite3_column_int64(st, 0);
		r->session_id = sqlite3_column_int64(st, 1);
		r->identity = sq_col_text(st, 2);
		r->target = sq_col_text(st, 3);
		r->model = sq_col_text(st, 4);
		r->test = sq_col_text(st, 5);
		r->created_at = sq_col_text(st, 6);
		r->details_json = sq_col_text(st, 7);
		r->processes = sqlite3_column_int(st, 8);
		r->samples = sqlite3_column_int(st, 9);
		r->within_cv = sqlite3_column_double(st, 10);
		r->between_cv = sqlite3_column_double(st, 11);
		r->mde = sqlite3_column_double(st, 12);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_noise_list_free(v, k);
		return sq_error(s, "list noise floors");
	}
	*out = v;
	*n = k;
	return 0;
}

void
store_noise_list_free(struct store_noise_row *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].identity);
		free(r[i].target);
		free(r[i].model);
		free(r[i].test);
		free(r[i].created_at);
		free(r[i].details_json);
	}
	free(r);
}

static int
noise_remove_one(struct store *s, int64_t id, const char *identity,
		 const char *target, const char *model, const char *test,
		 int64_t session, long *removed)
{
	sqlite3_stmt *st;

	*removed = 0;
	sq_op_begin(s);
	st = sq_prepare(s, "DELETE FROM noise WHERE (?1 = 0 OR id = ?1)"
		     " AND (?2 IS NULL OR identity = ?2)"
		     " AND (?3 IS NULL OR target = ?3)"
		     " AND (?4 IS NULL OR model = ?4)"
		     " AND (?5 IS NULL OR test = ?5)"
		     " AND (?6 = 0 OR session_id = ?6)");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sq_bind_text(st, 2, identity);
	sq_bind_text(st, 3, target);
	sq_bind_text(st, 4, model);
	sq_bind_text(st, 5, test);
	sqlite3_bind_int64(st, 6, session);
	if (sq_step_done(s, st, "forget noise floors") < 0)
		return -1;
	*removed = (long)sqlite3_changes(s->db);
	return 0;
}

int
store_noise_remove(struct store *s, int64_t id, const char *identity,
		   const char *target, const char *model, const char *test,
		   int64_t session, long *removed)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, noise_remove_one(s, id, identity, target,
						     model, test, session,
						     removed));
}
